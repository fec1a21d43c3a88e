import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The floors of src/, lowest first. A file may import from its own floor and the floors below, never
 * from one above; the most specific path decides a file's floor. The REST and GraphQL faces are one
 * floor but never import each other. The composition root on top is where everything is assembled.
 */
const FLOORS: { name: string; paths: string[] }[] = [
  {
    name: 'base',
    paths: ['errors.ts', 'config.ts', 'logger.ts', 'metrics.ts', 'validation.ts', 'money/', 'dates/'],
  },
  { name: 'database', paths: ['db/', 'audit/'] },
  { name: 'http', paths: ['http/', 'pages/'] },
  { name: 'request', paths: ['auth/', 'context.ts'] },
  { name: 'faces', paths: ['graphql/', 'rest/', 'limits/', 'idempotency/', 'jobs/', 'observability.ts'] },
  { name: 'modules', paths: ['modules/'] },
  {
    name: 'composition',
    paths: [
      'modules/registry.ts',
      'graphql/schema.ts',
      'jobs/worker.ts',
      'app.ts',
      'main.ts',
      'worker.ts',
      'cli/',
    ],
  },
];
const SEPARATE_FACES = ['rest/', 'graphql/'];

const SRC = path.resolve('src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

/** The src/-relative paths a file imports (static, re-exported and dynamic), outside src/ left out. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specifiers = [...text.matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)].map(
    (m) => m[1] as string,
  );
  return specifiers
    .map((specifier) => path.relative(SRC, path.resolve(path.dirname(file), specifier)))
    .filter((target) => !target.startsWith('..'));
}

/** The longest matching path of any floor decides. */
function floorOf(file: string): { floor: number; match: string } {
  let best = { floor: -1, match: '' };
  FLOORS.forEach(({ paths }, floor) => {
    for (const prefix of paths) {
      const matches = prefix.endsWith('/') ? file.startsWith(prefix) : file === prefix;
      if (matches && prefix.length > best.match.length) best = { floor, match: prefix };
    }
  });
  return best;
}

const files = sourceFiles(SRC).map((file) => ({
  file: path.relative(SRC, file),
  imports: importsOf(file),
}));

describe('the layers of src/', () => {
  it('places every source file on a floor', () => {
    const unplaced = files.filter(({ file }) => floorOf(file).floor < 0).map(({ file }) => file);
    expect(unplaced).toEqual([]);
  });

  it('never imports from a higher floor', () => {
    const upward = files.flatMap(({ file, imports }) => {
      const own = floorOf(file);
      return imports
        .filter((target) => floorOf(target).floor > own.floor)
        .map(
          (target) =>
            `${file} (${FLOORS[own.floor]?.name}) imports ${target} (${FLOORS[floorOf(target).floor]?.name})`,
        );
    });
    expect(upward).toEqual([]);
  });

  it('keeps the REST and GraphQL faces apart', () => {
    const crossing = files.flatMap(({ file, imports }) => {
      const face = SEPARATE_FACES.find((prefix) => file.startsWith(prefix));
      if (!face || floorOf(file).floor !== FLOORS.findIndex((f) => f.name === 'faces')) return [];
      return imports
        .filter((target) => SEPARATE_FACES.some((other) => other !== face && target.startsWith(other)))
        .map((target) => `${file} imports ${target}`);
    });
    expect(crossing).toEqual([]);
  });

  it('sees an upward import when there is one', () => {
    // The check itself: a database file reaching into a module would be reported.
    expect(floorOf('db/orm.ts').floor).toBeLessThan(floorOf('modules/invoice/invoice.entity.ts').floor);
    expect(floorOf('modules/registry.ts').floor).toBeGreaterThan(floorOf('modules/invoice/x.ts').floor);
  });
});
