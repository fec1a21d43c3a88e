import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadTrustedDocuments } from '../../src/graphql/trusted-documents.ts';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';

const ALLOWED = 'query Customers { customers(first: 1) { edges { cursor } } }';
const HASH = createHash('sha256').update(ALLOWED).digest('hex');
const manifest = join(mkdtempSync(join(tmpdir(), 'trusted-')), 'manifest.json');
writeFileSync(manifest, JSON.stringify({ [`sha256:${HASH}`]: ALLOWED }));

const t = setupTestApp({ trustedDocuments: loadTrustedDocuments(manifest) });

describe('trusted documents', () => {
  let env: TestEnvironment;

  beforeAll(async () => {
    env = await t.createEnvironment();
  });

  const post = (body: unknown) => t.rest('POST', '/graphql', { env, body });

  it('runs a manifest operation named by documentId, by Apollo persistedQuery hash, or sent as its text', async () => {
    const expected = { data: { customers: { edges: [] } } };
    expect((await post({ documentId: `sha256:${HASH}` })).body).toEqual(expected);
    expect((await post({ documentId: HASH })).body).toEqual(expected);
    expect((await post({ extensions: { persistedQuery: { version: 1, sha256Hash: HASH } } })).body).toEqual(
      expected,
    );
    expect((await post({ query: ALLOWED })).body).toEqual(expected);
  });

  it('refuses any other document with a code, and an unknown id', async () => {
    const arbitrary = await post({ query: '{ customers(first: 2) { edges { cursor } } }' });
    expect(arbitrary.status).toBe(403);
    expect(arbitrary.body.errors[0].extensions.code).toBe('TRUSTED_DOCUMENT_REQUIRED');

    const unknown = await post({ documentId: 'sha256:00' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.errors[0].extensions.code).toBe('TRUSTED_DOCUMENT_NOT_FOUND');
  });

  it('refuses a manifest whose hash is not the sha256 of its document', () => {
    const bad = join(mkdtempSync(join(tmpdir(), 'trusted-')), 'bad.json');
    writeFileSync(bad, JSON.stringify({ [`sha256:${'0'.repeat(64)}`]: ALLOWED }));
    expect(() => loadTrustedDocuments(bad)).toThrow(/not the sha256/);
  });
});
