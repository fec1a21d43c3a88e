import { type ChildProcess, spawn } from 'node:child_process';
import { freePort } from '../../src/db/embedded.ts';

const MAIN = new URL('../../src/main.ts', import.meta.url).pathname;
const WORKER = new URL('../../src/worker.ts', import.meta.url).pathname;

export type NodeProcess = { process: ChildProcess; output: () => string };
export type ServerProcess = NodeProcess & { url: string };

/**
 * Starts one of the project's entry points as its npm script does, collecting stdout and stderr,
 * and resolves once the output shows `ready`; rejects with the output if the process exits first.
 */
async function startNodeProcess(
  script: string,
  env: Record<string, string>,
  ready: string,
): Promise<NodeProcess> {
  const child = spawn(process.execPath, [script], {
    env: { ...process.env, ...env, LOG_LEVEL: 'info', NODE_ENV: 'test' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk) => (output += chunk));
  child.stderr?.on('data', (chunk) => (output += chunk));
  await new Promise<void>((resolve, reject) => {
    const timer = setInterval(() => {
      if (output.includes(ready)) {
        clearInterval(timer);
        resolve();
      }
    }, 50);
    child.once('exit', (code) => {
      clearInterval(timer);
      reject(new Error(`${script} exited with ${code}:\n${output}`));
    });
  });
  return { process: child, output: () => output };
}

/** Starts `node src/main.ts` as `npm start` does and waits until it listens. */
export async function startServer(env: Record<string, string>): Promise<ServerProcess> {
  const port = await freePort();
  const server = await startNodeProcess(
    MAIN,
    // Server tests bill only when they ask for it.
    { BILLING_RUN_SCHEDULE: 'off', ...env, PORT: String(port), HOST: '127.0.0.1' },
    'listening on',
  );
  return { ...server, url: `http://127.0.0.1:${port}` };
}

/** Starts `node src/worker.ts` as `npm run worker` does and waits until its job worker runs. */
export function startWorker(env: Record<string, string>): Promise<NodeProcess> {
  return startNodeProcess(WORKER, env, 'job worker running');
}

/** Signals the server and resolves with its exit code. */
export async function stopServer(
  server: ServerProcess,
  signal: NodeJS.Signals = 'SIGTERM',
): Promise<number | null> {
  if (server.process.exitCode !== null) return server.process.exitCode;
  const exited = new Promise<number | null>((resolve) =>
    server.process.once('exit', (code) => resolve(code)),
  );
  server.process.kill(signal);
  return exited;
}
