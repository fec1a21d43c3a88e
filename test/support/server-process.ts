import { type ChildProcess, spawn } from 'node:child_process';
import { freePort } from '../../src/db/embedded.ts';

const MAIN = new URL('../../src/main.ts', import.meta.url).pathname;

export type ServerProcess = { process: ChildProcess; output: () => string; url: string };

/** Starts `node src/main.ts` as `npm start` does and waits until it listens. */
export async function startServer(env: Record<string, string>): Promise<ServerProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, [MAIN], {
    env: {
      ...process.env,
      // Server tests bill only when they ask for it.
      BILLING_RUN_SCHEDULE: 'off',
      ...env,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      NODE_ENV: 'test',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk) => (output += chunk));
  child.stderr?.on('data', (chunk) => (output += chunk));
  await new Promise<void>((resolve, reject) => {
    const timer = setInterval(() => {
      if (output.includes('listening on')) {
        clearInterval(timer);
        resolve();
      }
    }, 50);
    child.once('exit', (code) => {
      clearInterval(timer);
      reject(new Error(`server exited with ${code}:\n${output}`));
    });
  });
  return { process: child, output: () => output, url: `http://127.0.0.1:${port}` };
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
