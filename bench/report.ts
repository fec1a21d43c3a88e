import type { Measurement } from './load.ts';

export type Side = 'service' | 'baseline';

export type ScenarioResult = {
  name: string;
  rounds: Record<Side, Measurement>[];
  statements: Record<Side, string[]>;
};

export type BenchReport = {
  date: string;
  machine: string;
  settings: string;
  scenarios: ScenarioResult[];
  /** MiB after each round. */
  rss: Record<Side, number[]>;
  /** Every statement of the GraphQL page for 1 and for 50 invoices. */
  pageStatements: { one: string[]; fifty: string[] };
  durationSeconds: number;
};

type Summary = {
  requestsPerSecond: number;
  p50: number;
  p99: number;
  errors: number;
  cpuMsPerRequest: number | null;
  postgresCpuMsPerRequest: number | null;
};

/**
 * What a statement is for: `framing` is the transaction around a request's work (`begin`, the
 * environment's `set_config` that row-level security needs, savepoints, `commit`), `auth` the token
 * check every request makes before it; `query` is the request's own reading and writing.
 */
export function statementKind(statement: string): 'framing' | 'auth' | 'query' {
  const text = statement.trim().toLowerCase();
  if (/^(begin|commit|rollback|savepoint|release|select set_config\()/.test(text)) return 'framing';
  if (/from "?api_token"?/.test(text)) return 'auth';
  return 'query';
}

const queriesOf = (statements: string[]) =>
  statements.filter((statement) => statementKind(statement) === 'query').length;

const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;

function summarise(rounds: Measurement[]): Summary {
  return {
    requestsPerSecond: mean(rounds.map((round) => round.requestsPerSecond)),
    p50: mean(rounds.map((round) => round.p50)),
    p99: mean(rounds.map((round) => round.p99)),
    errors: rounds.reduce((sum, round) => sum + round.errors, 0),
    cpuMsPerRequest: meanOrNull(rounds.map((round) => round.cpuMsPerRequest)),
    postgresCpuMsPerRequest: meanOrNull(rounds.map((round) => round.postgresCpuMsPerRequest)),
  };
}

const meanOrNull = (values: (number | null)[]) =>
  values.every((value) => value !== null) ? mean(values as number[]) : null;

const cpu = (value: number | null) => (value === null ? 'n/a' : value.toFixed(2));

export const RSS_LIMIT_MIB = 300;
/** Two rounds of the same load may differ by this much before the memory counts as growing. */
export const RSS_GROWTH_TOLERANCE = 0.1;

export type Target = { name: string; measured: string; met: boolean };

export function targets(report: BenchReport): Target[] {
  const result: Target[] = [];
  const byName = (prefix: string) => report.scenarios.find((scenario) => scenario.name.startsWith(prefix));
  for (const [prefix, share] of [
    ['POST /invoices', 0.5],
    ['GET /invoices', 0.6],
  ] as const) {
    const scenario = byName(prefix);
    if (!scenario) continue;
    const service = summarise(scenario.rounds.map((round) => round.service));
    const baseline = summarise(scenario.rounds.map((round) => round.baseline));
    const ratio = service.requestsPerSecond / baseline.requestsPerSecond;
    result.push({
      name: `${scenario.name}: req/s at least ${share * 100} % of the baseline`,
      measured: `${percent(ratio)} (${fixed(service.requestsPerSecond)} vs ${fixed(baseline.requestsPerSecond)})`,
      met: ratio >= share,
    });
    const p99 = service.p99 / baseline.p99;
    result.push({
      name: `${scenario.name}: p99 at most 3x the baseline's`,
      measured: `${p99.toFixed(2)}x (${fixed(service.p99)} ms vs ${fixed(baseline.p99)} ms)`,
      met: p99 <= 3,
    });
  }
  const page = byName('GraphQL invoices');
  if (page) {
    const one = queriesOf(report.pageStatements.one);
    const fifty = queriesOf(report.pageStatements.fifty);
    result.push({
      name: 'GraphQL page of 50 invoices with customer, items, settlements: at most 5 SQL queries, fixed',
      measured:
        `${fifty} queries for 50 invoices, ${one} for 1 (with the transaction, and the token check where the token is not cached: ` +
        `${report.pageStatements.fifty.length} and ${report.pageStatements.one.length} statements)`,
      met: fifty <= 5 && one === fifty,
    });
  }
  const [first, second] = report.rss.service;
  if (first !== undefined && second !== undefined) {
    result.push({
      name: `Server RSS under ${RSS_LIMIT_MIB} MB after the run`,
      measured: `${fixed(second)} MiB`,
      met: second < RSS_LIMIT_MIB,
    });
    result.push({
      name: `Server RSS not growing across two consecutive runs (within ${RSS_GROWTH_TOLERANCE * 100} %)`,
      measured: `${fixed(first)} MiB after run 1, ${fixed(second)} MiB after run 2 (${signedPercent(second / first - 1)})`,
      met: second <= first * (1 + RSS_GROWTH_TOLERANCE),
    });
  }
  return result;
}

const fixed = (value: number) => (value >= 100 ? value.toFixed(0) : value.toFixed(1));
const percent = (ratio: number) => `${(ratio * 100).toFixed(0)} %`;
const signedPercent = (ratio: number) => `${ratio >= 0 ? '+' : ''}${(ratio * 100).toFixed(1)} %`;

function table(header: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

/** The measured part of bench/RESULTS.md, also printed at the end of the run. */
export function renderReport(report: BenchReport): string {
  const summaries = report.scenarios.map((scenario) => ({
    scenario,
    service: summarise(scenario.rounds.map((round) => round.service)),
    baseline: summarise(scenario.rounds.map((round) => round.baseline)),
  }));
  const checked = targets(report);
  const [rssService1, rssService2] = report.rss.service;
  const [rssBaseline1, rssBaseline2] = report.rss.baseline;
  return [
    '# Benchmark results',
    '',
    `Written by \`npm run bench\` on ${report.date} in ${report.durationSeconds.toFixed(0)} s. ${report.machine}`,
    '',
    report.settings,
    '',
    `## Service against the baseline (mean of ${report.scenarios[0]?.rounds.length ?? 0} rounds)`,
    '',
    table(
      [
        'endpoint',
        'service req/s',
        'p50 ms',
        'p99 ms',
        'errors',
        'baseline req/s',
        'p50 ms',
        'p99 ms',
        'errors',
        'req/s ratio',
        'p99 ratio',
        'CPU ms/req service',
        'baseline',
        'PostgreSQL CPU ms/req service',
        'baseline',
      ],
      summaries.map(({ scenario, service, baseline }) => [
        scenario.name,
        fixed(service.requestsPerSecond),
        fixed(service.p50),
        fixed(service.p99),
        String(service.errors),
        fixed(baseline.requestsPerSecond),
        fixed(baseline.p50),
        fixed(baseline.p99),
        String(baseline.errors),
        percent(service.requestsPerSecond / baseline.requestsPerSecond),
        `${(service.p99 / baseline.p99).toFixed(2)}x`,
        cpu(service.cpuMsPerRequest),
        cpu(baseline.cpuMsPerRequest),
        cpu(service.postgresCpuMsPerRequest),
        cpu(baseline.postgresCpuMsPerRequest),
      ]),
    ),
    '',
    'CPU ms/req: CPU time (user + system) the server process spent per request during the measurement; ' +
      'PostgreSQL CPU ms/req: the same for all PostgreSQL processes. Unlike req/s they hardly depend on what ' +
      'else the machine runs, so they compare runs taken at different times.',
    '',
    '## Targets',
    '',
    table(
      ['target', 'measured', 'met'],
      checked.map((target) => [target.name, target.measured, target.met ? 'yes' : '**no**']),
    ),
    '',
    '## SQL statements per request',
    '',
    'Every statement a request sends through `pg`, counted in-process on the same code. *Queries* are ' +
      'the request’s own reads and writes; *all* adds the token check and the transaction around the work ' +
      '(`begin`, the `set_config` of the environment that row-level security reads, savepoints, `commit`). ' +
      'The service runs with its token cache as the server does (`TOKEN_CACHE_SECONDS`): the counted request ' +
      'finds its token cached and sends no token check; the baseline reads its token every time.',
    '',
    table(
      ['endpoint', 'service queries', 'service all', 'baseline queries', 'baseline all'],
      report.scenarios.map((scenario) => [
        scenario.name,
        String(queriesOf(scenario.statements.service)),
        String(scenario.statements.service.length),
        String(queriesOf(scenario.statements.baseline)),
        String(scenario.statements.baseline.length),
      ]),
    ),
    '',
    ...report.scenarios.flatMap((scenario) => [
      `<details><summary>${scenario.name}: the service's statements</summary>`,
      '',
      '```sql',
      ...scenario.statements.service.map((statement) => statement.replace(/\s+/g, ' ').trim()),
      '```',
      '',
      '</details>',
      '',
    ]),
    '## Server memory (RSS, MiB)',
    '',
    table(
      ['process', 'after run 1', 'after run 2'],
      [
        ['service', fixed(rssService1 ?? 0), fixed(rssService2 ?? 0)],
        ['baseline', fixed(rssBaseline1 ?? 0), fixed(rssBaseline2 ?? 0)],
      ],
    ),
    '',
    '## Each run',
    '',
    table(
      ['endpoint', 'run', 'service req/s', 'baseline req/s', 'req/s ratio', 'service p99', 'baseline p99'],
      report.scenarios.flatMap((scenario) =>
        scenario.rounds.map((round, index) => [
          scenario.name,
          String(index + 1),
          fixed(round.service.requestsPerSecond),
          fixed(round.baseline.requestsPerSecond),
          percent(round.service.requestsPerSecond / round.baseline.requestsPerSecond),
          fixed(round.service.p99),
          fixed(round.baseline.p99),
        ]),
      ),
    ),
    '',
  ].join('\n');
}
