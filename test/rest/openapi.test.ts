import { randomUUID } from 'node:crypto';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { routes } from '../../src/modules/registry.ts';
import { addFormats, ContractChecker } from '../support/contract.ts';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';
import {
  expectCompressedAsset,
  expectNoInlineScript,
  expectPageHeaders,
  linkedAssets,
} from '../support/pages.ts';

const t = setupTestApp();

type Operation = {
  operationId: string;
  parameters: { $ref?: string; in?: string; name?: string; required?: boolean }[];
  requestBody?: { content: Record<string, { schema: unknown }> };
  responses: Record<string, unknown>;
};

describe('OpenAPI document', () => {
  let document: any;

  beforeAll(async () => {
    const response = await t.rest('GET', '/openapi.json');
    expect(response.status).toBe(200);
    document = response.body;
  });

  it('is served without credentials and validates as OpenAPI 3.1', async () => {
    const validator = new Validator();
    const result = await validator.validate(document);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
    expect(document.servers).toEqual([{ url: 'http://test' }]);
  });

  it('documents every route with its path ids, body, success and problem responses', () => {
    for (const route of routes) {
      const operation: Operation = document.paths[route.path]?.[route.method.toLowerCase()];
      expect(operation, `${route.method} ${route.path}`).toBeDefined();
      const pathParams = [...route.path.matchAll(/\{(\w+)\}/g)].map((match) => match[1]);
      for (const name of pathParams) {
        expect(operation.parameters).toContainEqual(
          expect.objectContaining({
            in: 'path',
            name,
            required: true,
            schema: expect.objectContaining({ format: 'uuid' }),
          }),
        );
      }
      expect(operation.parameters).toContainEqual({ $ref: '#/components/parameters/Environment' });
      expect(Boolean(operation.requestBody)).toBe(Boolean(route.body));
      expect(Object.keys(operation.responses)).toEqual(
        expect.arrayContaining([String(route.response.status), '400', '401', '403', '500', '503']),
      );
      if (pathParams.length > 0) expect(operation.responses).toHaveProperty('404');
      if (route.body)
        expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(['413', '415', '422']));
    }
  });

  it('documents the explicit e-invoice paths as XML, beside the Accept negotiation', () => {
    for (const syntax of ['ubl', 'cii']) {
      const operation = document.paths[`/invoices/{invoiceId}/${syntax}.xml`]?.get;
      expect(operation?.operationId).toBe(`getInvoicesByInvoiceId${syntax === 'ubl' ? 'Ubl' : 'Cii'}Xml`);
      expect(Object.keys(operation?.responses['200'].content ?? {})).toEqual(['application/xml']);
      expect(operation?.responses).toHaveProperty('409');
    }
    expect(Object.keys(document.paths['/invoices/{invoiceId}'].get.responses['200'].content)).toContain(
      'application/cii+xml',
    );
  });

  it('declares bearer authentication, the x-environment header and the shared Problem schema', () => {
    expect(document.security).toEqual([{ bearerAuth: [] }]);
    expect(document.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(document.components.parameters.Environment).toMatchObject({
      in: 'header',
      name: 'x-environment',
      required: true,
      schema: { format: 'uuid' },
    });
    expect(document.components.responses.Unauthorized.content).toEqual({
      'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } },
    });
    expect(document.components.schemas.Problem.additionalProperties).toEqual({});
  });

  it('holds only schemas that compile as JSON Schema 2020-12', () => {
    const ajv = new Ajv2020({ strict: false });
    addFormats(ajv);
    ajv.addSchema({ ...document, $id: 'https://billing.test/openapi.json' });
    const pointers: string[] = [];
    const collect = (node: unknown, pointer: string): void => {
      if (typeof node !== 'object' || node === null) return;
      for (const [key, child] of Object.entries(node)) {
        const childPointer = `${pointer}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`;
        if (key === 'schema' || pointer === '/components/schemas') pointers.push(childPointer);
        else collect(child, childPointer);
      }
    };
    collect(document.paths, '/paths');
    collect(document.components, '/components');
    expect(pointers.length).toBeGreaterThan(routes.length);
    for (const pointer of pointers) {
      expect(
        () => ajv.compile({ $ref: `https://billing.test/openapi.json#${pointer}` }),
        pointer,
      ).not.toThrow();
    }
  });
});

describe('API reference page', () => {
  it('serves /docs under the page policy, linking Swagger UI from this server as compressed, cached files', async () => {
    const response = await t.app.fetch('http://test/docs', { headers: { accept: 'text/html' } });
    expectPageHeaders(response);
    const html = await response.text();
    expect(html).toContain('data-openapi="/openapi.json"');
    expectNoInlineScript(html);

    const linked = linkedAssets(html);
    expect(linked.map((url) => url.replace(/\?v=[\w-]+$/, ''))).toEqual([
      '/docs/favicon.png',
      '/docs/swagger-ui.css',
      '/docs/swagger-ui-bundle.js',
      '/docs/start.js',
    ]);
    const types: Record<string, string> = {
      png: 'image/png',
      css: 'text/css; charset=utf-8',
      js: 'text/javascript; charset=utf-8',
    };
    for (const url of linked) {
      await expectCompressedAsset(t.app, url, types[url.replace(/\?.*$/, '').split('.').pop()!]!);
    }
    const bundle = await t.app.fetch(`http://test${linked[2]}`);
    expect(await bundle.text()).toContain('SwaggerUIBundle');
  });
});

describe('response contract check', () => {
  const checker = new ContractChecker();
  const json = (status: number, body: unknown, type = 'application/json') => ({
    status,
    headers: new Headers({ 'content-type': type }),
    body,
  });
  const path = `/customers/${randomUUID()}`;

  it('passes a response that matches its operation', () => {
    expect(() =>
      checker.check('GET', path, json(404, { title: 'Not found', status: 404 }, 'application/problem+json')),
    ).not.toThrow();
  });

  it('fails a status the operation does not document', () => {
    expect(() => checker.check('GET', path, json(418, {}))).toThrow(/does not document/);
  });

  it('fails a body that breaks the documented schema', () => {
    expect(() => checker.check('GET', path, json(200, { id: 'not-a-uuid', name: 7 }))).toThrow(
      /breaks its OpenAPI schema[\s\S]*\/id[\s\S]*\/name/,
    );
  });

  it('fails a success answered as a problem media type', () => {
    expect(() => checker.check('GET', path, json(404, { status: 404 }, 'text/plain'))).toThrow(
      /documented as/,
    );
  });

  it('fails a problem outside every operation that is not a problem document', () => {
    expect(() => checker.check('GET', '/nowhere', json(404, 'gone', 'text/plain'))).toThrow(/not a problem/);
  });
});

describe('REST responses conform to the document', () => {
  let env: TestEnvironment;

  beforeAll(async () => {
    env = await t.createEnvironment();
  });

  it('checks success and problem bodies of real calls through the harness', async () => {
    // given a customer created through GraphQL
    const created = await t.graphql(
      'mutation ($input: CustomerCreateInput!) { customerCreate(input: $input) { customer { id } userErrors { message } } }',
      { input: { name: 'Ada Lovelace', handle: 'ada', currency: 'EUR' } },
      { env },
    );
    const id = created.body.data.customerCreate.customer.id;

    // when it is read and changed over REST, then every answer passed the harness's contract check
    expect((await t.rest('GET', `/customers/${id}`, { env })).status).toBe(200);
    expect((await t.rest('PATCH', `/customers/${id}`, { env, body: { name: 'Ada King' } })).status).toBe(200);
    expect((await t.rest('PATCH', `/customers/${id}`, { env, body: { name: '' } })).status).toBe(400);
    expect(
      (
        await t.rest('PATCH', `/customers/${id}`, {
          env,
          rawBody: 'name=x',
          headers: { 'content-type': 'text/plain' },
        })
      ).status,
    ).toBe(415);
    expect((await t.rest('GET', `/customers/${randomUUID()}`, { env })).status).toBe(404);
    expect((await t.rest('DELETE', `/customers/${id}`, { env })).status).toBe(405);
  });
});
