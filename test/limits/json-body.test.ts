import { beforeAll, describe, expect, it } from 'vitest';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';

const t = setupTestApp();

/**
 * A JSON body is parsed from the bytes the body limit has read (no second Request for Yoga's parser):
 * every kind of JSON body answers as Yoga's own parsing of it did.
 */
describe('GraphQL JSON bodies', () => {
  let env: TestEnvironment;

  beforeAll(async () => {
    env = await t.createEnvironment();
  });

  const post = async (rawBody: string, type = 'application/json') => {
    const response = await t.rest('POST', '/graphql', { env, rawBody, headers: { 'content-type': type } });
    return [response.status, response.body];
  };

  it('answers a query in every JSON content type Yoga reads as JSON', async () => {
    const body = JSON.stringify({
      query: 'query Q { __typename v: __typename @include(if: true) }',
    });
    const answer = [200, { data: { __typename: 'Query', v: 'Query' } }];
    expect(await post(body)).toEqual(answer);
    expect(await post(body, 'application/json; charset=utf-8')).toEqual(answer);
    expect(await post(body, 'application/graphql+json')).toEqual(answer);
    expect(await post(` ${body}\n`)).toEqual(answer);
  });

  it('refuses what is not a JSON object as it did', async () => {
    const badJson = {
      message: 'POST body sent invalid JSON.',
      extensions: {
        code: 'BAD_REQUEST',
        originalError: {
          name: 'SyntaxError',
          message:
            'Expected property name or \'}\' in JSON at position 1 (line 1 column 2), "{nope" is not valid JSON',
        },
      },
    };
    expect(await post('{nope')).toEqual([400, { errors: [badJson] }]);
    expect(await post('null')).toEqual([
      400,
      {
        errors: [
          {
            message: 'POST body is expected to be object but received null',
            extensions: { code: 'BAD_REQUEST' },
          },
        ],
      },
    ]);
    expect(await post('42')).toEqual([
      400,
      {
        errors: [
          {
            message: 'POST body is expected to be object but received number',
            extensions: { code: 'BAD_REQUEST' },
          },
        ],
      },
    ]);
    const invalid = (message: string) => ({
      errors: [
        {
          message: 'POST body sent invalid JSON.',
          extensions: { code: 'BAD_REQUEST', originalError: { name: 'SyntaxError', message } },
        },
      ],
    });
    expect(await post('')).toEqual([400, invalid('Unexpected end of JSON input, "" is not valid JSON')]);
    expect(await post('\u00a0{}')).toEqual([
      400,
      invalid(`Unexpected token '\u00a0', "\u00a0{}" is not valid JSON, "\u00a0{}" is not valid JSON`),
    ]);
    expect(await post('[{"query":"{ __typename }"}]')).toEqual([
      400,
      { errors: [{ message: 'Batching is not supported.', extensions: { code: 'BAD_REQUEST' } }] },
    ]);
    expect(await post('{"variables":{}}')).toEqual([
      200,
      { errors: [{ message: 'Must provide query string.', extensions: { code: 'BAD_REQUEST' } }] },
    ]);
  });
});
