import { beforeAll, describe, expect, it } from 'vitest';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';

const METRICS_TOKEN = 'scrape-secret-per-document';
const t = setupTestApp({ metricsToken: METRICS_TOKEN });

/** One text, so Yoga's parse cache hands every request below the same parsed document. */
const DOCUMENT = `query Read($id: UUID!) { customer(id: $id) { name } }
mutation Write($name: String!) { customerCreate(input: { name: $name }) { customer { id name } userErrors { message } } }`;

/**
 * What is worked out once per parsed document (the operation a name selects, the metrics label) and once
 * per request (whether the variables fit their types) must follow the name and the variables of each
 * request, not those of the first one.
 */
describe('one document sent with different operation names and variables', () => {
  let env: TestEnvironment;
  const send = (operationName: string | undefined, variables: Record<string, unknown>) =>
    t.rest('POST', '/graphql', { env, body: { query: DOCUMENT, operationName, variables } });

  beforeAll(async () => {
    env = await t.createEnvironment();
  });

  it('runs the operation each request names, with its own variables, answering and writing as it says', async () => {
    // when: the mutation, then the query for what it wrote, then the query with a variable that does not
    // fit, then with none named, then the query again
    const write = await send('Write', { name: 'Eve' });
    const id = write.body.data.customerCreate.customer.id as string;
    const read = await send('Read', { id });
    const unfit = await send('Read', { id: 'not-a-uuid' });
    const unnamed = await send(undefined, { id });
    const again = await send('Read', { id });
    const written = await send('Write', { name: 'Frank' });

    // then
    expect(write.status).toBe(200);
    expect(write.body.data.customerCreate).toEqual({ customer: { id, name: 'Eve' }, userErrors: [] });
    expect(read.body).toEqual({ data: { customer: { name: 'Eve' } } });
    expect([unfit.status, unfit.body]).toEqual([
      200,
      {
        errors: [
          {
            message: 'Variable "$id" got invalid value "not-a-uuid"; Value is not a valid UUID: not-a-uuid',
            locations: [{ line: 1, column: 12 }],
            extensions: { code: 'BAD_USER_INPUT' },
          },
        ],
      },
    ]);
    expect([unnamed.status, unnamed.body]).toEqual([
      400,
      {
        errors: [
          {
            message: 'Could not determine what operation to execute.',
            extensions: { code: 'OPERATION_RESOLUTION_FAILURE' },
          },
        ],
      },
    ]);
    expect(again.body).toEqual({ data: { customer: { name: 'Eve' } } });
    expect(written.body.data.customerCreate.customer.name).toBe('Frank');
    const rows = await t.sql<{ name: string }>(
      'select name from customer where environment_id = $1 order by id',
      [env.id],
    );
    expect(rows.map((row) => row.name)).toEqual(['Eve', 'Frank']);
    // each write audited under the mutation's root field
    const audit = await t.sql<{ operation: string }>(
      `select operation from audit_event where environment_id = $1 and object_type = 'Customer' order by occurred_at`,
      [env.id],
    );
    expect(audit.map((row) => row.operation)).toEqual(['customerCreate', 'customerCreate']);

    // and the metrics label each request by the operation it ran
    const metrics = await t.rest('GET', '/metrics', {
      headers: { authorization: `Bearer ${METRICS_TOKEN}` },
    });
    const text = metrics.body as string;
    expect(text).toMatch(
      /http_requests_total\{method="POST",route="graphql:mutation:customerCreate",status="200"\} 2/,
    );
    expect(text).toMatch(
      /http_requests_total\{method="POST",route="graphql:query:customer",status="200"\} 3/,
    );
  });
});
