import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { pino } from 'pino';
import { GRAPHQL_PATH } from '../../src/app.ts';
import { PROBLEM_CONTENT_TYPE } from '../../src/http/problem.ts';
import { routes } from '../../src/modules/registry.ts';
import { createOpenApiDocument, type OpenApiDocument } from '../../src/rest/openapi.ts';
import { RestRouter } from '../../src/rest/router.ts';
import { CONTRACT_RESPONSES } from './contract-schema.ts';

// ajv-formats is CommonJS with a `default` beside `module.exports`; TypeScript sees only the former.
export const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

const DOCUMENT_ID = 'https://billing.test/openapi.json';

/** How each binary media type the API answers with must begin. */
const BINARY_SIGNATURES: Record<string, string> = { 'application/pdf': '%PDF-' };

type Checked = { status: number; headers: Headers; body: unknown };
type ResponseObject = { $ref?: string; content?: Record<string, unknown> };

const pointer = (...segments: string[]) =>
  segments.map((segment) => `/${segment.replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');

/**
 * Checks REST responses against the OpenAPI document the server publishes: the status must be
 * documented for the operation, the media type must match, and the body must validate against the
 * documented schema, and a success of a contract operation against the contract's own schema too.
 * Other failures outside GraphQL (unknown path, wrong method) must be problems.
 */
export class ContractChecker {
  readonly document: OpenApiDocument;
  private readonly router = new RestRouter(routes, pino({ level: 'silent' }));
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
  private readonly validators = new Map<string, ValidateFunction>();
  private readonly contractValidators = new Map<string, ValidateFunction>();

  constructor() {
    this.document = createOpenApiDocument(routes);
    addFormats(this.ajv);
    this.ajv.addSchema({ ...this.document, $id: DOCUMENT_ID });
  }

  /** Throws an error naming the operation and every mismatch; returns quietly when the response conforms. */
  check(method: string, path: string, response: Checked): void {
    const { pathname } = new URL(path, 'http://test');
    if (pathname === GRAPHQL_PATH) return;
    const match = this.router.match(method, pathname);
    const mediaType = response.headers.get('content-type')?.split(';')[0]?.trim() ?? '';
    if (match.kind !== 'found') {
      if (response.status < 400) return;
      if (mediaType !== PROBLEM_CONTENT_TYPE) {
        throw new Error(`${method} ${pathname} answered ${response.status} as "${mediaType}", not a problem`);
      }
      this.validate(pointer('components', 'schemas', 'Problem'), response, `${method} ${pathname}`);
      return;
    }
    const template = match.route.path;
    const operation = `${method} ${template}`;
    const responses = this.document.paths?.[template]?.[method.toLowerCase() as 'get']?.responses ?? {};
    let location = pointer('paths', template, method.toLowerCase(), 'responses', String(response.status));
    let documented = responses[String(response.status) as '200'] as ResponseObject | undefined;
    if (!documented) {
      throw new Error(
        `${operation} answered ${response.status}, which its OpenAPI operation does not document ` +
          `(documented: ${Object.keys(responses).join(', ')}); body: ${JSON.stringify(response.body)}`,
      );
    }
    if (documented.$ref) {
      location = documented.$ref.slice(1);
      documented = this.document.components?.responses?.[documented.$ref.split('/').pop() as string] as
        | ResponseObject
        | undefined;
    }
    const content = documented?.content ?? {};
    if (!(mediaType in content)) {
      if (Object.keys(content).length === 0 && response.body === '') return;
      throw new Error(
        `${operation} answered ${response.status} as "${mediaType}", documented as ` +
          `${Object.keys(content).join(', ') || 'no content'}`,
      );
    }
    if (response.body instanceof Uint8Array) {
      this.checkBinary(mediaType, response.body, operation);
      return;
    }
    this.validate(`${location}${pointer('content', mediaType, 'schema')}`, response, operation);
    if (response.status < 300 && mediaType === 'application/json') this.checkContract(operation, response);
  }

  /** A success body of a contract operation must also meet the contract's own schema (contract-schema.ts). */
  private checkContract(operation: string, response: Checked): void {
    const schema = CONTRACT_RESPONSES[operation];
    if (!schema) return;
    let validate = this.contractValidators.get(operation);
    if (!validate) {
      validate = this.ajv.compile(schema);
      this.contractValidators.set(operation, validate);
    }
    if (validate(response.body)) return;
    const problems = (validate.errors ?? [])
      .map((error) => `  ${error.instancePath || '/'} ${error.message} ${JSON.stringify(error.params)}`)
      .join('\n');
    throw new Error(
      `${operation} answered ${response.status} with a body that breaks the contract's schema:\n` +
        `${problems}\nbody: ${JSON.stringify(response.body)}`,
    );
  }

  /** Bytes have no JSON schema to meet: they must at least be what their media type says. */
  private checkBinary(mediaType: string, body: Uint8Array, operation: string): void {
    const magic = BINARY_SIGNATURES[mediaType];
    if (!magic)
      throw new Error(`${operation} answered bytes of ${mediaType}, which the checker cannot verify`);
    if (Buffer.from(body.subarray(0, magic.length)).toString('latin1') !== magic) {
      throw new Error(
        `${operation} answered ${mediaType} whose bytes do not start with ${JSON.stringify(magic)}`,
      );
    }
  }

  private validate(schemaPointer: string, response: Checked, operation: string): void {
    let validate = this.validators.get(schemaPointer);
    if (!validate) {
      validate = this.ajv.compile({ $ref: `${DOCUMENT_ID}#${schemaPointer}` });
      this.validators.set(schemaPointer, validate);
    }
    if (validate(response.body)) return;
    const problems = (validate.errors ?? [])
      .map((error) => `  ${error.instancePath || '/'} ${error.message} ${JSON.stringify(error.params)}`)
      .join('\n');
    throw new Error(
      `${operation} answered ${response.status} with a body that breaks its OpenAPI schema:\n` +
        `${problems}\nbody: ${JSON.stringify(response.body)}`,
    );
  }
}
