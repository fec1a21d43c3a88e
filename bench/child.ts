import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../src/db/embedded.ts';

const HERE = path.dirname(fileURLToPath(import.meta.url));

export type Child = { process: ChildProcess; url: string; output: () => string };

/** The start script's words: `[NAME=value …] node [flags] src/main.ts`. */
async function startWords(): Promise<{ env: Record<string, string>; flags: string[] }> {
  const manifest = JSON.parse(await readFile(path.join(HERE, '..', 'package.json'), 'utf8'));
  const words = String(manifest.scripts.start).trim().split(/\s+/);
  const node = words.findIndex((word) => !/^[A-Z_][A-Z0-9_]*=/.test(word));
  const main = words.indexOf('src/main.ts');
  if (words[node] !== 'node' || main < 0)
    throw new Error('the start script must read `[NAME=value …] node [flags] src/main.ts`');
  const env = Object.fromEntries(
    words.slice(0, node).map((word) => [word.slice(0, word.indexOf('=')), word.slice(word.indexOf('=') + 1)]),
  );
  return { env, flags: words.slice(node + 1, main) };
}

/** The `node` flags `npm start` runs the server with (package.json): the bench measures what ships. */
export async function startFlags(): Promise<string[]> {
  return (await startWords()).flags;
}

/**
 * The environment variables `npm start` sets before `node` (package.json), such as glibc's
 * MALLOC_MMAP_THRESHOLD_, which must be in the environment when the process starts.
 */
export async function startEnvironment(): Promise<Record<string, string>> {
  return (await startWords()).env;
}

/** Starts a server process and waits until it answers HTTP. */
export async function startChild(args: string[], env: Record<string, string>, probe: string): Promise<Child> {
  const port = await freePort();
  const child = spawn(process.execPath, args, {
    env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk) => (output += chunk));
  child.stderr?.on('data', (chunk) => (output += chunk));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null)
      throw new Error(`${args.join(' ')} exited with ${child.exitCode}:\n${output}`);
    try {
      await fetch(`${url}${probe}`);
      return { process: child, url, output: () => output };
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  child.kill('SIGKILL');
  throw new Error(`${args.join(' ')} did not answer within 60 s:\n${output}`);
}

export async function stopChild(child: Child | undefined): Promise<void> {
  if (!child || child.process.exitCode !== null) return;
  const exited = once(child.process, 'exit');
  child.process.kill('SIGTERM');
  const timer = setTimeout(() => child.process.kill('SIGKILL'), 20_000);
  await exited;
  clearTimeout(timer);
}

/**
 * Runs a bench script's `main`, then says how many of its `failures` (checks that did not hold) there were
 * and exits non-zero if any; stops the script after `limitMs` if it has not finished, once `cleanup` has
 * stopped what it started (servers, databases), so a stuck run leaves nothing behind.
 */
export async function runBounded(
  name: string,
  limitMs: number,
  main: () => Promise<void>,
  cleanup: () => Promise<void>,
  failures: readonly string[],
): Promise<void> {
  const say = (message: string) => process.stdout.write(`${message}\n`);
  const timer = setTimeout(() => {
    say(`${name} did not finish within ${limitMs / 60_000} minutes; stopping`);
    void cleanup().finally(() => process.exit(2));
  }, limitMs);
  timer.unref();
  await main();
  if (failures.length > 0) {
    say(`\n${failures.length} check(s) failed`);
    process.exitCode = 1;
  }
}

/** A bench script's checks: each printed as it is made, listed for its report, the failed ones kept. */
export function checkRecorder(): {
  check: (ok: boolean, what: string) => void;
  lines: string[];
  failures: string[];
} {
  const lines: string[] = [];
  const failures: string[] = [];
  const check = (ok: boolean, what: string) => {
    process.stdout.write(`${ok ? 'ok  ' : 'FAIL'} ${what}\n`);
    lines.push(`- ${ok ? 'held' : '**failed**'}: ${what}`);
    if (!ok) failures.push(what);
  };
  return { check, lines, failures };
}
