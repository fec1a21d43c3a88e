import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { expectProblem, setupTestApp } from '../support/harness.ts';

const t = setupTestApp();
const exec = promisify(execFile);
const CLI = new URL('../../src/cli/main.ts', import.meta.url).pathname;

/** Runs the CLI as a user would, against this file's database; never throws on a non-zero exit. */
async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await exec(process.execPath, [CLI, ...args], {
      env: { ...process.env, DATABASE_URL: t.databaseUrl },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

const graphqlAs = (token: string, environmentId: string) =>
  t.graphql(
    '{ customers { edges { cursor } } }',
    {},
    {
      headers: { authorization: `Bearer ${token}`, 'x-environment': environmentId },
    },
  );

describe('admin CLI', () => {
  it('creates environments and tokens that the API accepts, lists them, and revokes a token', async () => {
    // given two environments
    const first = await cli('env', 'create', '--name', 'Production', '--json');
    const second = await cli('env', 'create', '--name', 'Staging', '--json');
    expect(first.code).toBe(0);
    const production = JSON.parse(first.stdout);
    const staging = JSON.parse(second.stdout);
    expect(production).toEqual({
      id: expect.any(String),
      name: 'Production',
      kind: 'live',
      taxRounding: 'document',
      timezone: 'UTC',
    });

    // when a token is granted both
    const created = await cli(
      'token',
      'create',
      '--env',
      production.id,
      '--env',
      staging.id,
      '--name',
      'ci',
      '--json',
    );
    expect(created.code).toBe(0);
    const token = JSON.parse(created.stdout);
    expect(token).toEqual({ id: expect.any(String), token: expect.stringMatching(/^bg_/), scope: 'write' });

    // then it works in both environments
    expect((await graphqlAs(token.token, production.id)).status).toBe(200);
    expect((await graphqlAs(token.token, staging.id)).status).toBe(200);

    // and the lists show them without the secret
    const environments = JSON.parse((await cli('env', 'list', '--json')).stdout);
    expect(environments.map((e: { name: string }) => e.name)).toEqual(
      expect.arrayContaining(['Production', 'Staging']),
    );
    const listed = await cli('token', 'list', '--json');
    expect(listed.stdout).not.toContain(token.token);
    expect(JSON.parse(listed.stdout)).toContainEqual(
      expect.objectContaining({
        id: token.id,
        name: 'ci',
        revokedAt: null,
        environmentIds: [production.id, staging.id],
      }),
    );

    // when revoked, the API refuses it
    const revoked = await cli('token', 'revoke', token.id);
    expect(revoked.code).toBe(0);
    expectProblem(await graphqlAs(token.token, production.id), 401);
  });

  it('creates test environments and read tokens, and lists their kind and scope', async () => {
    // given a test environment and a read token for it, made by the CLI
    const created = await cli(
      'env',
      'create',
      '--name',
      'Sandbox',
      '--test',
      '--tax-rounding',
      'line',
      '--json',
    );
    expect(created.code).toBe(0);
    const sandbox = JSON.parse(created.stdout);
    expect(sandbox).toEqual({
      id: expect.any(String),
      name: 'Sandbox',
      kind: 'test',
      taxRounding: 'line',
      timezone: 'UTC',
    });
    const issued = await cli('token', 'create', '--env', sandbox.id, '--scope', 'read', '--json');
    expect(issued.code).toBe(0);
    const token = JSON.parse(issued.stdout);
    expect(token.scope).toBe('read');

    // then the token can query but not write, on either face
    expect((await graphqlAs(token.token, sandbox.id)).status).toBe(200);
    const headers = { authorization: `Bearer ${token.token}`, 'x-environment': sandbox.id };
    const mutation = await t.graphql(
      'mutation { customerCreate(input: { name: "No" }) { userErrors { code } } }',
      {},
      { headers },
    );
    expect(mutation.status).toBe(403);
    expect(mutation.body.errors[0].message).toContain('write scope');

    // and the lists show the environment's kind and the token's scope
    const environments = JSON.parse((await cli('env', 'list', '--json')).stdout);
    expect(environments).toContainEqual(
      expect.objectContaining({ id: sandbox.id, kind: 'test', taxRounding: 'line' }),
    );
    const tokens = JSON.parse((await cli('token', 'list', '--json')).stdout);
    expect(tokens).toContainEqual(expect.objectContaining({ id: token.id, scope: 'read' }));
  }, 60_000);

  it('reports an up-to-date database on migrate', async () => {
    const result = await cli('migrate', '--json');
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ applied: [] });
  });

  it.each([
    [[], 'no command given'],
    [['env', 'create'], 'needs --name'],
    [
      ['env', 'create', '--name', 'X', '--tax-rounding', 'invoice'],
      '--tax-rounding must be document or line',
    ],
    [['token', 'create', '--json'], 'at least one --env'],
    [['token', 'create', '--env', 'nope'], 'not a UUID'],
    [['token', 'create', '--env', randomUUID(), '--scope', 'admin'], '--scope must be read or write'],
    [['token', 'revoke'], 'needs the token id'],
    [['token', 'revoke', randomUUID()], 'no token has id'],
    [['env', 'create', '--nme', 'typo'], "Unknown option '--nme'"],
    [['frobnicate'], 'unknown command'],
  ])('refuses %j with a usage message and exit code 2', async (args, message) => {
    const result = await cli(...args);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
    expect(result.stderr).toContain('Usage:');
  });

  it('refuses a token for an environment that does not exist', async () => {
    const result = await cli('token', 'create', '--env', randomUUID());
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('unknown environment');
  });
});
