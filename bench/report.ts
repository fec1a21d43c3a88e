import type { Measurement } from './load.ts';

/** The servers measured: the service, its raw baseline, and PostGraphile v5 where it serves the scenario. */
export type Side = 'service' | 'baseline' | 'postgraphile';
export const SIDES: readonly Side[] = ['service', 'baseline', 'postgraphile'];
const LABEL: Record<Side, string> = {
  service: 'service',
  baseline: 'baseline',
  postgraphile: 'PostGraphile',
};

export type Round = {
  /** Which side was measured first, second, third in this round. */
  order: Side[];
  measured: Partial<Record<Side, Measurement>>;
};

export type ScenarioResult = {
  name: string;
  /** The sides measured in this scenario (the memory scenario has the service only). */
  sides: Side[];
  rounds: Round[];
  /** Every statement of one request, counted in-process, where counted. */
  statements: Partial<Record<Side, string[]>>;
  /** A scenario measured for the service's memory only (no targets on its req/s). */
  memoryOnly?: boolean;
};

export type BenchReport = {
  date: string;
  machine: string;
  settings: string;
  rounds: number;
  scenarios: ScenarioResult[];
  /** Every statement of the GraphQL page for 1 and for 50 invoices. */
  pageStatements: { one: string[]; fifty: string[] };
  durationSeconds: number;
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

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

/** A figure over the rounds: its median, lowest and highest. */
export type Spread = { median: number; min: number; max: number } | null;

export function spread(values: (number | null | undefined)[]): Spread {
  const known = values.filter((value): value is number => value !== null && value !== undefined);
  if (known.length === 0 || known.some((value) => !Number.isFinite(value))) return null;
  return { median: median(known), min: Math.min(...known), max: Math.max(...known) };
}

type Pick = (measurement: Measurement) => number | null;
const pick = {
  requestsPerSecond: (m: Measurement) => m.requestsPerSecond,
  p99: (m: Measurement) => m.p99,
  cpu: (m: Measurement) => m.cpuMsPerRequest,
  postgresCpu: (m: Measurement) => m.postgresCpuMsPerRequest,
} satisfies Record<string, Pick>;

/** A side's figure in each round it was measured. */
const valuesOf = (scenario: ScenarioResult, side: Side, figure: Pick) =>
  scenario.rounds.map((round) => {
    const measurement = round.measured[side];
    return measurement ? figure(measurement) : null;
  });

/** The service's figure over another side's, round by round (each pair measured in the same round). */
function ratioOf(scenario: ScenarioResult, other: Side, figure: Pick): Spread {
  if (!scenario.sides.includes(other)) return null;
  return spread(
    scenario.rounds.map((round) => {
      const [service, peer] = [round.measured.service, round.measured[other]];
      if (!service || !peer) return null;
      const [a, b] = [figure(service), figure(peer)];
      return a === null || b === null || b === 0 ? null : a / b;
    }),
  );
}

const fixed = (value: number) =>
  value >= 100 ? value.toFixed(0) : value >= 10 ? value.toFixed(1) : value.toFixed(2);
export const percent = (ratio: number) => `${(ratio * 100).toFixed(0)} %`;
export const times = (ratio: number) => `${ratio.toFixed(2)}x`;
const signedPercent = (ratio: number) => `${ratio >= 0 ? '+' : ''}${(ratio * 100).toFixed(1)} %`;

/** `median (min–max)`, or a dash where the side was not measured. */
export function show(value: Spread, format: (value: number) => string = fixed): string {
  if (!value) return '–';
  return value.min === value.max
    ? format(value.median)
    : `${format(value.median)} (${format(value.min)}–${format(value.max)})`;
}

export const RSS_LIMIT_MIB = 300;
/** The first and last round's RSS of a scenario may differ by this much before the memory counts as growing. */
export const RSS_GROWTH_TOLERANCE = 0.1;

export type Target = { name: string; measured: string; met: boolean };

/** The targets (issue 21, items 1, 2 and 5), judged on the median of the rounds. */
export function targets(report: BenchReport): Target[] {
  const result: Target[] = [];
  const measured = report.scenarios.filter((scenario) => !scenario.memoryOnly);
  for (const scenario of measured) {
    const share = scenario.name.startsWith('GraphQL customer')
      ? 0.7
      : scenario.name.startsWith('GraphQL invoices') || !scenario.name.startsWith('GraphQL')
        ? 0.8
        : null;
    const rate = ratioOf(scenario, 'baseline', pick.requestsPerSecond);
    if (share !== null && rate) {
      result.push({
        name: `${scenario.name}: req/s at least ${share * 100} % of the baseline's`,
        measured: show(rate, percent),
        met: rate.median >= share,
      });
    }
    const p99 = ratioOf(scenario, 'baseline', pick.p99);
    if (p99) {
      result.push({
        name: `${scenario.name}: p99 at most 2x the baseline's`,
        measured: show(p99, times),
        met: p99.median <= 2,
      });
    }
    if (scenario.name.startsWith('GraphQL invoices')) {
      const peerRate = ratioOf(scenario, 'postgraphile', pick.requestsPerSecond);
      const peerP99 = ratioOf(scenario, 'postgraphile', pick.p99);
      result.push({
        name: `${scenario.name}: req/s at least 1.0x PostGraphile's`,
        measured: peerRate ? show(peerRate, times) : 'not measured',
        met: (peerRate?.median ?? 0) >= 1,
      });
      result.push({
        name: `${scenario.name}: p99 at most 1.0x PostGraphile's`,
        measured: peerP99 ? show(peerP99, times) : 'not measured',
        met: peerP99 !== null && peerP99.median <= 1,
      });
    }
  }
  const page = measured.find((scenario) => scenario.name.startsWith('GraphQL invoices'));
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
  const peaks = report.scenarios.map((scenario) => ({
    name: scenario.name,
    peaks: valuesOf(scenario, 'service', (m) => m.rssPeak).filter((value): value is number => value !== null),
  }));
  const highest = peaks
    .filter((entry) => entry.peaks.length > 0)
    .map((entry) => ({ name: entry.name, peak: Math.max(...entry.peaks) }))
    .sort((a, b) => b.peak - a.peak)[0];
  if (highest) {
    result.push({
      name: `Server RSS under ${RSS_LIMIT_MIB} MiB during every scenario, the heaviest allowed query included`,
      measured: `highest peak ${fixed(highest.peak)} MiB (${highest.name})`,
      met: highest.peak < RSS_LIMIT_MIB,
    });
  }
  // Flat: what the process keeps once a round's load is over, its RSS at the end of each measurement (a
  // peak depends on how many requests happened to overlap).
  const growth = report.scenarios
    .map((scenario) => ({
      name: scenario.name,
      ends: valuesOf(scenario, 'service', (m) => m.rssEnd).filter((value): value is number => value !== null),
    }))
    .filter((entry) => entry.ends.length > 1)
    .map((entry) => ({
      name: entry.name,
      growth: (entry.ends.at(-1) as number) / (entry.ends[0] as number) - 1,
    }))
    .sort((a, b) => b.growth - a.growth)[0];
  if (growth) {
    result.push({
      name: `Server RSS flat across rounds: each scenario's RSS at the end of the last round within ${RSS_GROWTH_TOLERANCE * 100} % of the first round's`,
      measured: `largest growth ${signedPercent(growth.growth)} (${growth.name})`,
      met: growth.growth <= RSS_GROWTH_TOLERANCE,
    });
  }
  return result;
}

function table(header: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

const errorsOf = (scenario: ScenarioResult) =>
  scenario.sides
    .map((side) => {
      const errors = valuesOf(scenario, side, (m) => m.errors).reduce<number>((sum, n) => sum + (n ?? 0), 0);
      return String(errors);
    })
    .join(' / ');

/** The measured part of bench/RESULTS.md, also printed at the end of the run. */
export function renderReport(report: BenchReport): string {
  const checked = targets(report);
  const of = (scenario: ScenarioResult, side: Side, figure: Pick) =>
    scenario.sides.includes(side) ? show(spread(valuesOf(scenario, side, figure))) : '–';
  const perRound = (scenario: ScenarioResult, side: Side, figure: Pick) =>
    valuesOf(scenario, side, figure)
      .map((value) => (value === null ? '–' : value.toFixed(0)))
      .join(', ');
  return [
    '# Benchmark results',
    '',
    `Written by \`npm run bench\` on ${report.date} in ${report.durationSeconds.toFixed(0)} s. ${report.machine}`,
    '',
    report.settings,
    '',
    `## Throughput and latency: service, baseline and PostGraphile (median (min–max) of ${report.rounds} rounds)`,
    '',
    'Ratios are taken round by round (the service over the other side measured in the same round), then ' +
      'summarised; a dash: that server does not serve the scenario.',
    '',
    table(
      [
        'endpoint',
        'service req/s',
        'baseline req/s',
        'PostGraphile req/s',
        'req/s ÷ baseline',
        'req/s ÷ PostGraphile',
        'service p99 ms',
        'baseline p99 ms',
        'PostGraphile p99 ms',
        'p99 ÷ baseline',
        'p99 ÷ PostGraphile',
        'errors (per side)',
      ],
      report.scenarios.map((scenario) => [
        scenario.name,
        of(scenario, 'service', pick.requestsPerSecond),
        of(scenario, 'baseline', pick.requestsPerSecond),
        of(scenario, 'postgraphile', pick.requestsPerSecond),
        show(ratioOf(scenario, 'baseline', pick.requestsPerSecond), percent),
        show(ratioOf(scenario, 'postgraphile', pick.requestsPerSecond), times),
        of(scenario, 'service', pick.p99),
        of(scenario, 'baseline', pick.p99),
        of(scenario, 'postgraphile', pick.p99),
        show(ratioOf(scenario, 'baseline', pick.p99), times),
        show(ratioOf(scenario, 'postgraphile', pick.p99), times),
        errorsOf(scenario),
      ]),
    ),
    '',
    `## CPU per request, ms (median (min–max) of ${report.rounds} rounds)`,
    '',
    'Server: CPU time (user + system) of the server process per request, from before the measured load ' +
      'until the job queue is empty again after it (so the event deliveries of writes count to the service). ' +
      'PostgreSQL: the same for all PostgreSQL processes. Unlike req/s they hardly depend on what else the ' +
      'machine runs, so they compare runs taken at different times.',
    '',
    table(
      [
        'endpoint',
        'server: service',
        'baseline',
        'PostGraphile',
        'service ÷ baseline',
        'service ÷ PostGraphile',
        'PostgreSQL: service',
        'baseline',
        'PostGraphile',
        'service ÷ PostGraphile',
      ],
      report.scenarios.map((scenario) => [
        scenario.name,
        of(scenario, 'service', pick.cpu),
        of(scenario, 'baseline', pick.cpu),
        of(scenario, 'postgraphile', pick.cpu),
        show(ratioOf(scenario, 'baseline', pick.cpu), times),
        show(ratioOf(scenario, 'postgraphile', pick.cpu), times),
        of(scenario, 'service', pick.postgresCpu),
        of(scenario, 'baseline', pick.postgresCpu),
        of(scenario, 'postgraphile', pick.postgresCpu),
        show(ratioOf(scenario, 'postgraphile', pick.postgresCpu), times),
      ]),
    ),
    '',
    '## Targets (issue 21), on the medians',
    '',
    table(
      ['target', 'measured: median (min–max)', 'met'],
      checked.map((target) => [target.name, target.measured, target.met ? 'yes' : '**no**']),
    ),
    '',
    '## Server memory during each scenario (RSS, MiB)',
    '',
    'Sampled every 200 ms from the start of the warm-up to the end of the measurement (peak), and once at ' +
      'its end; one value per round, in round order.',
    '',
    table(
      ['endpoint', 'server', 'peak per round', 'end per round', 'last round ÷ first: peak', 'end'],
      report.scenarios.flatMap((scenario) =>
        scenario.sides.map((side) => {
          const growth = (figure: Pick) => {
            const values = valuesOf(scenario, side, figure).filter(
              (value): value is number => value !== null,
            );
            return values.length > 1
              ? signedPercent((values.at(-1) as number) / (values[0] as number) - 1)
              : '–';
          };
          return [
            scenario.name,
            LABEL[side],
            perRound(scenario, side, (m) => m.rssPeak),
            perRound(scenario, side, (m) => m.rssEnd),
            growth((m) => m.rssPeak),
            growth((m) => m.rssEnd),
          ];
        }),
      ),
    ),
    '',
    '## SQL statements per request',
    '',
    'Every statement a request sends through `pg`, counted in-process on the same code. *Queries* are ' +
      'the request’s own reads and writes; *all* adds the token check and the transaction around the work ' +
      '(`begin`, the `set_config` of the environment that row-level security reads, savepoints, `commit`). ' +
      'The service runs with its token cache as the server does (`TOKEN_CACHE_SECONDS`): the counted request ' +
      'finds its token cached and sends no token check; the baseline reads its token every time. PostGraphile ' +
      '(counted in-process, the same server as the measured one) checks no token.',
    '',
    table(
      [
        'endpoint',
        'service queries',
        'service all',
        'baseline queries',
        'baseline all',
        'PostGraphile queries',
        'PostGraphile all',
      ],
      report.scenarios
        .filter((scenario) => scenario.statements.service && scenario.statements.baseline)
        .map((scenario) => {
          const { service = [], baseline = [], postgraphile } = scenario.statements;
          return [
            scenario.name,
            String(queriesOf(service)),
            String(service.length),
            String(queriesOf(baseline)),
            String(baseline.length),
            postgraphile ? String(queriesOf(postgraphile)) : '–',
            postgraphile ? String(postgraphile.length) : '–',
          ];
        }),
    ),
    '',
    ...report.scenarios
      .filter((scenario) => scenario.statements.service)
      .flatMap((scenario) => [
        `<details><summary>${scenario.name}: the service's statements</summary>`,
        '',
        '```sql',
        ...(scenario.statements.service ?? []).map((statement) => statement.replace(/\s+/g, ' ').trim()),
        '```',
        '',
        '</details>',
        '',
        ...(scenario.statements.postgraphile
          ? [
              `<details><summary>${scenario.name}: PostGraphile's statements</summary>`,
              '',
              '```sql',
              ...scenario.statements.postgraphile.map((statement) => statement.replace(/\s+/g, ' ').trim()),
              '```',
              '',
              '</details>',
              '',
            ]
          : []),
      ]),
    '## Each round',
    '',
    table(
      [
        'endpoint',
        'round',
        'order',
        'service req/s',
        'baseline req/s',
        'PostGraphile req/s',
        'service p99',
        'baseline p99',
        'PostGraphile p99',
      ],
      report.scenarios.flatMap((scenario) =>
        scenario.rounds.map((round, index) => {
          const cell = (side: Side, figure: Pick) => {
            const measurement = round.measured[side];
            const value = measurement ? figure(measurement) : null;
            return value === null ? '–' : fixed(value);
          };
          return [
            scenario.name,
            String(index + 1),
            round.order.map((side) => LABEL[side]).join(', '),
            cell('service', pick.requestsPerSecond),
            cell('baseline', pick.requestsPerSecond),
            cell('postgraphile', pick.requestsPerSecond),
            cell('service', pick.p99),
            cell('baseline', pick.p99),
            cell('postgraphile', pick.p99),
          ];
        }),
      ),
    ),
    '',
  ].join('\n');
}
