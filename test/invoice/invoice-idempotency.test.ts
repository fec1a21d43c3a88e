import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, setupTestApp, type TestEnvironment } from '../support/harness.ts';
import { invoiceFixtures } from './fixtures.ts';

const t = setupTestApp();
const fixtures = invoiceFixtures(t);

describe('POST /invoices with an Idempotency-Key', () => {
  let env: TestEnvironment;
  let customerId: string;
  const body = () => ({
    customerId,
    currency: 'EUR',
    date: '2026-11-01',
    items: [{ title: 'Consulting', quantity: 3, unitAmount: 12_500 }],
  });
  const post = (key: string, payload: unknown = body()) =>
    t.rest('POST', '/invoices', { env, body: payload, headers: { 'idempotency-key': key } });
  const invoiceCount = async () =>
    (
      await t.sql<{ n: number }>('select count(*)::int as n from invoice where environment_id = $1', [env.id])
    )[0]?.n;

  beforeAll(async () => {
    env = await t.createEnvironment();
    customerId = await fixtures.createCustomer(env);
  });

  it('creates exactly one invoice from 50 concurrent identical requests', async () => {
    // given no invoice yet
    const before = await invoiceCount();
    const key = randomUUID();

    // when 50 identical requests race under one key
    const responses = await Promise.all(Array.from({ length: 50 }, () => post(key)));

    // then exactly one invoice exists, every answer is that invoice or "still in flight"
    expect(await invoiceCount()).toBe((before ?? 0) + 1);
    const created = responses.filter((response) => response.status === 201);
    const inFlight = responses.filter((response) => response.status === 409);
    expect(created.length + inFlight.length).toBe(50);
    expect(created.filter((response) => response.headers.get('idempotent-replayed') !== 'true')).toHaveLength(
      1,
    );
    expect(new Set(created.map((response) => response.body.id)).size).toBe(1);
    for (const response of inFlight) expectProblem(response, 409);
  });

  it('replays the first answer, Location included, on a retry', async () => {
    const key = randomUUID();
    const first = await post(key);
    const retry = await post(key);

    expect(first.status).toBe(201);
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.headers.get('location')).toBe(first.headers.get('location'));
    expect(retry.body).toEqual(first.body);
  });

  it('refuses the same key with another body (422) and writes nothing', async () => {
    const key = randomUUID();
    await post(key);
    const before = await invoiceCount();

    const reused = await post(key, { ...body(), memo: 'a different request' });

    expectProblem(reused, 422);
    expect(await invoiceCount()).toBe(before);
  });

  it('stores nothing for a rejected request, so a corrected retry with the same key succeeds', async () => {
    const key = randomUUID();
    const rejected = await post(key, { ...body(), customerId: randomUUID() });
    expectProblem(rejected, 422);

    const corrected = await post(key, body());
    expect(corrected.status).toBe(201);
    expect(corrected.headers.get('idempotent-replayed')).toBeNull();
  });
});
