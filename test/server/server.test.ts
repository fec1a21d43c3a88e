import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { type AddressInfo, createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, stopServer } from '../support/server-process.ts';

const MAIN = new URL('../../src/main.ts', import.meta.url).pathname;

/** The ids of the PostgreSQL server processes running on a data directory, from their command lines. */
async function postgresProcessesOn(dataDir: string): Promise<string[]> {
  const pids = (await readdir('/proc')).filter((entry) => /^\d+$/.test(entry));
  const commands = await Promise.all(
    pids.map((pid) => readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')),
  );
  return pids.filter(
    (_, index) => commands[index]?.includes('postgres') && commands[index]?.includes(dataDir),
  );
}

describe('the server process on the embedded database (npm start)', () => {
  let dataDir: string;

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'billing-start-'));
    await chmod(dataDir, 0o755);
  });

  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it('bootstraps on first start, serves HTTP, shuts down cleanly, and reuses its data on the next start', async () => {
    // given a first start on an empty data directory
    const first = await startServer({ DATA_DIR: dataDir, DATABASE_URL: '' });
    const printed = first.output();
    const token = /token:\s+(bg_\S+)/.exec(printed)?.[1] as string;
    const environmentId = /environment:\s+([0-9a-f-]{36})/.exec(printed)?.[1] as string;
    expect(token).toBeDefined();
    expect(environmentId).toBeDefined();
    expect(printed).toContain(`${first.url}/graphql?headers=`);

    // when a client uses the printed credentials over real HTTP
    const headers = {
      authorization: `Bearer ${token}`,
      'x-environment': environmentId,
      'content-type': 'application/json',
    };
    const created = await fetch(`${first.url}/graphql`, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        query: 'mutation { customerCreate(input: { name: "Over HTTP" }) { customer { id } } }',
      }),
    }).then((response) => response.json());
    const customerId = created.data.customerCreate.customer.id;
    const read = await fetch(`${first.url}/customers/${customerId}`, { headers });
    expect(read.status).toBe(200);
    expect((await fetch(`${first.url}/ready`)).status).toBe(200);
    const graphiql = await fetch(`${first.url}/graphql`, { headers: { accept: 'text/html' } });
    expect(graphiql.status).toBe(200);
    expect(await graphiql.text()).toContain('Billing gateway');

    // then SIGTERM stops it with exit code 0, PostgreSQL included
    expect(await stopServer(first)).toBe(0);
    expect(existsSync(path.join(dataDir, 'postgres', 'postmaster.pid'))).toBe(false);

    // and a second start prints no new token and still has the customer
    const second = await startServer({ DATA_DIR: dataDir, DATABASE_URL: '' });
    try {
      expect(second.output()).not.toContain('First start');
      const again = await fetch(`${second.url}/customers/${customerId}`, { headers });
      expect(again.status).toBe(200);
      expect((await again.json()).name).toBe('Over HTTP');
    } finally {
      expect(await stopServer(second, 'SIGINT')).toBe(0);
    }
  }, 120_000);

  it('exits non-zero naming the port when it is taken, stops its PostgreSQL, and keeps the first-start token for the next start', async () => {
    // given a fresh data directory and a port something else holds
    const freshDir = await mkdtemp(path.join(tmpdir(), 'billing-port-taken-'));
    await chmod(freshDir, 0o755);
    const holder = createNetServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const port = (holder.address() as AddressInfo).port;
    try {
      // when the server is started on it
      const child = spawn(process.execPath, [MAIN], {
        env: {
          ...process.env,
          BILLING_RUN_SCHEDULE: 'off',
          DATABASE_URL: '',
          DATA_DIR: freshDir,
          PORT: String(port),
          HOST: '127.0.0.1',
          NODE_ENV: 'test',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout?.on('data', (chunk) => (output += chunk));
      child.stderr?.on('data', (chunk) => (output += chunk));
      const code = await new Promise((resolve) => child.once('exit', resolve));

      // then it says which port is taken, exits non-zero, printed no token, and left no PostgreSQL behind
      expect(code).toBe(1);
      expect(output).toContain(`port ${port} on 127.0.0.1 is already in use`);
      expect(output).not.toContain('First start');
      expect(existsSync(path.join(freshDir, 'postgres', 'postmaster.pid'))).toBe(false);
      expect(await postgresProcessesOn(freshDir)).toEqual([]);
    } finally {
      holder.close();
    }

    // and the next start, on a free port, is the first start: it prints the token
    const next = await startServer({ DATA_DIR: freshDir, DATABASE_URL: '' });
    try {
      expect(next.output()).toMatch(/token:\s+bg_\S+/);
    } finally {
      expect(await stopServer(next)).toBe(0);
      await rm(freshDir, { recursive: true, force: true });
    }
  }, 120_000);

  it('names a bad configuration variable and exits non-zero', async () => {
    const child = spawn(process.execPath, [MAIN], {
      env: { ...process.env, PORT: 'eighty', DATABASE_URL: 'mysql://nope' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr?.on('data', (chunk) => (stderr += chunk));
    const code = await new Promise((resolve) => child.once('exit', resolve));
    expect(code).toBe(1);
    expect(stderr).toContain('PORT');
    expect(stderr).toContain('DATABASE_URL');
  });
});
