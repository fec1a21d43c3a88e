import { beforeAll, describe, expect, it } from 'vitest';
import { MAX_BODY_BYTES } from '../../src/http/body.ts';
import { expectProblem, setupTestApp, type TestEnvironment } from '../support/harness.ts';

const t = setupTestApp();

describe('REST adapter', () => {
  let env: TestEnvironment;
  let customerId: string;

  beforeAll(async () => {
    env = await t.createEnvironment();
    const created = await t.graphql(
      'mutation { customerCreate(input: { name: "Body tests" }) { customer { id } } }',
      {},
      { env },
    );
    customerId = created.body.data.customerCreate.customer.id;
  });

  it('answers 404 with a problem for a path it does not serve', async () => {
    const response = await t.rest('GET', '/nowhere', { env });
    expectProblem(response, 404);
    expect(response.body.instance).toBe('/nowhere');
  });

  it('answers 405 with Allow for a wrong method on a known path', async () => {
    const response = await t.rest('DELETE', `/customers/${customerId}`, { env });
    expectProblem(response, 405);
    expect(response.headers.get('allow')).toBe('GET, PATCH, HEAD');
  });

  it('answers HEAD like GET without a body', async () => {
    const get = await t.app.fetch(`http://test/customers/${customerId}`, { headers: env.headers });
    const head = await t.app.fetch(`http://test/customers/${customerId}`, {
      method: 'HEAD',
      headers: env.headers,
    });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toBe(get.headers.get('content-type'));
    expect(await head.text()).toBe('');
    expect(JSON.parse(await get.text())).toMatchObject({ id: customerId });
    const missing = await t.app.fetch('http://test/customers/00000000-0000-4000-8000-000000000000', {
      method: 'HEAD',
      headers: env.headers,
    });
    expect(missing.status).toBe(404);
  });

  it('answers HEAD of a streamed export and ends its transaction', async () => {
    const path = 'http://test/journal-entries?from=2026-01-01&to=2026-12-31';
    const head = await t.app.fetch(path, {
      method: 'HEAD',
      headers: { ...env.headers, accept: 'text/csv' },
    });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(await head.text()).toBe('');
    // The cancelled stream gave its connection back: no transaction of it is left open.
    await expect
      .poll(async () => {
        const rows = await t.sql(
          "select count(*)::int as open from pg_stat_activity where datname = current_database() and state like 'idle in transaction%'",
        );
        return rows[0]?.open;
      })
      .toBe(0);
  });

  it('serves an index at / without a token', async () => {
    const response = await t.rest('GET', '/');
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      graphql: 'http://test/graphql',
      openapi: 'http://test/openapi.json',
      docs: 'http://test/docs',
    });
  });

  it('answers 415 when the body is not application/json', async () => {
    const response = await t.rest('PATCH', `/customers/${customerId}`, {
      env,
      rawBody: 'name=x',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expectProblem(response, 415);
  });

  it('answers 400 for malformed JSON', async () => {
    const response = await t.rest('PATCH', `/customers/${customerId}`, { env, rawBody: '{"name": "x",' });
    expectProblem(response, 400);
    expect(response.body.detail).toContain('not valid JSON');
  });

  it('answers 400 for a body that is not UTF-8, and writes nothing', async () => {
    // given JSON whose string holds 0xC3 0x28, a lead byte followed by no continuation byte
    const body = (text: string) => Buffer.from(text.replace('%BAD%', '\u00c3('), 'latin1');

    // when it is sent to a PATCH and to a POST
    const patched = await t.rest('PATCH', `/customers/${customerId}`, {
      env,
      rawBody: body('{"name": "Caf%BAD%"}'),
    });
    const posted = await t.rest('POST', '/invoices', {
      env,
      rawBody: body(
        `{"customerId": "${customerId}", "currency": "EUR", "date": "2026-03-01", "items": [{"title": "%BAD%", "quantity": 1, "unitAmount": 100}]}`,
      ),
    });

    // then both are refused as such, and neither the customer nor the invoices changed
    for (const response of [patched, posted]) {
      expectProblem(response, 400);
      expect(response.body.detail).toBe('The request body is not valid UTF-8; encode its text as UTF-8.');
    }
    const [row] = await t.sql('select name from customer where id = $1', [customerId]);
    expect(row?.name).toBe('Body tests');
    expect(await t.sql('select id from invoice where customer_id = $1', [customerId])).toEqual([]);
  });

  it('answers 400 naming the body when it is JSON but not an object', async () => {
    const response = await t.rest('PATCH', `/customers/${customerId}`, { env, body: ['name'] });
    expectProblem(response, 400);
    expect(response.body.errors[0].pointer).toBe('');
  });

  it('answers 413 for a body over 1 MiB, declared or streamed', async () => {
    const huge = JSON.stringify({ name: 'x'.repeat(MAX_BODY_BYTES) });
    const response = await t.rest('PATCH', `/customers/${customerId}`, { env, rawBody: huge });
    expectProblem(response, 413);

    const chunked = await t.app.fetch(`http://test/customers/${customerId}`, {
      method: 'PATCH',
      headers: { ...env.headers, 'content-type': 'application/json' },
      body: new ReadableStream({
        start(controller) {
          for (let i = 0; i < 20; i++) controller.enqueue(new TextEncoder().encode(' '.repeat(64 * 1024)));
          controller.close();
        },
      }),
      duplex: 'half',
    } as RequestInit);
    expect(chunked.status).toBe(413);

    // A body read whole for its declared length is measured as read: a short declaration lets none through.
    const understated = await t.app.fetch(`http://test/customers/${customerId}`, {
      method: 'PATCH',
      headers: { ...env.headers, 'content-type': 'application/json', 'content-length': '20' },
      body: new ReadableStream({
        start(controller) {
          controller.enqueue(new TextEncoder().encode(huge));
          controller.close();
        },
      }),
      duplex: 'half',
    } as RequestInit);
    expect(understated.status).toBe(413);
    const [row] = await t.sql('select name from customer where id = $1', [customerId]);
    expect(row?.name).toBe('Body tests');
  });

  it('accepts a charset parameter on application/json', async () => {
    const response = await t.rest('PATCH', `/customers/${customerId}`, {
      env,
      rawBody: JSON.stringify({ name: 'Body tests' }),
      headers: { 'content-type': 'application/json; charset=utf-8' },
    });
    expect(response.status).toBe(200);
  });

  it('checks credentials before reading the body', async () => {
    const response = await t.rest('PATCH', `/customers/${customerId}`, {
      rawBody: '{',
      headers: { 'x-environment': env.id },
    });
    expectProblem(response, 401);
  });
});
