/**
 * Summarises a V8 CPU profile (`node --cpu-prof`, e.g. from `BENCH_PROFILE=1 BENCH_ONLY=… npm run bench`):
 * the top functions by self time, and self time by package (a node_modules package, the service's own
 * source, Node's internals, or V8's idle/GC/program buckets), from the first sample inside request handling
 * on (start-up and module loading left out).
 *
 *   node bench/profile-summary.ts bench/profiles/<file>.cpuprofile [top=25]
 */
import { readFile } from 'node:fs/promises';

type Node = {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
};
type Profile = { nodes: Node[]; samples: number[]; timeDeltas: number[] };

const [file, topArgument] = process.argv.slice(2);
if (!file) throw new Error('usage: node bench/profile-summary.ts <file.cpuprofile> [top]');
const top = Number(topArgument ?? 25);
const profile = JSON.parse(await readFile(file, 'utf8')) as Profile;

const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const parent = new Map<number, number>();
for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
/** Whether a sample's stack is inside request handling (src/app.ts), to skip the start-up before it. */
const inRequest = (id: number): boolean => {
  for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
    if (byId.get(at)?.callFrame.url.endsWith('/src/app.ts')) return true;
  }
  return false;
};
const firstRequest = profile.samples.findIndex(inRequest);
const selfMicros = new Map<number, number>();
profile.samples.forEach((id, index) => {
  if (index < firstRequest) return;
  selfMicros.set(id, (selfMicros.get(id) ?? 0) + (profile.timeDeltas[index] ?? 0));
});

/** Where a frame's code lives: a package name, `src` (the service), `node:` internals or a V8 bucket. */
function owner(url: string, name: string): string {
  if (!url) return `(${name || 'anonymous'})`;
  const packageMatch = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (packageMatch) return packageMatch[1] as string;
  if (url.startsWith('node:')) return 'node internals';
  if (url.includes('/src/')) return 'service (src/)';
  if (url.includes('/bench/')) return 'bench';
  return url;
}

const functions = new Map<string, number>();
const owners = new Map<string, number>();
let total = 0;
let idle = 0;
for (const [id, micros] of selfMicros) {
  const node = byId.get(id);
  if (!node) continue;
  const { functionName, url, lineNumber } = node.callFrame;
  total += micros;
  if (functionName === '(idle)') idle += micros;
  const where = url
    ? `${url.replace(/^.*node_modules\//, '').replace(/^.*\/(src|bench)\//, '$1/')}:${lineNumber + 1}`
    : '';
  const key = `${functionName || '(anonymous)'} ${where}`.trim();
  functions.set(key, (functions.get(key) ?? 0) + micros);
  const group = owner(url, functionName);
  owners.set(group, (owners.get(group) ?? 0) + micros);
}

const busy = total - idle;
const percent = (micros: number) => `${((100 * micros) / busy).toFixed(1)} %`;
const rows = (map: Map<string, number>, count: number) =>
  [...map]
    .filter(([key]) => key !== '(idle)' && key !== '((idle))')
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(
      ([key, micros]) =>
        `${percent(micros).padStart(7)}  ${(micros / 1000).toFixed(0).padStart(7)} ms  ${key}`,
    );

process.stdout.write(
  [
    `${file}: ${(total / 1e6).toFixed(1)} s sampled from the first request on, ${(busy / 1e6).toFixed(1)} s not idle (percentages of that)`,
    '',
    'self time by owner:',
    ...rows(owners, 20),
    '',
    `top ${top} functions by self time:`,
    ...rows(functions, top),
    '',
  ].join('\n'),
);
