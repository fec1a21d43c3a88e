import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createGraphQLError, type Plugin } from 'graphql-yoga';

/** Allowed operations: sha256 hex of the document text → the document. */
export type TrustedDocuments = ReadonlyMap<string, string>;

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/**
 * Reads a manifest of trusted documents: a JSON object from hash to document (as the GraphQL Codegen
 * client preset and Relay write it). A hash may carry a `sha256:` prefix; each must be the sha256 of its
 * document, so a client computing the hash itself finds it.
 */
export function loadTrustedDocuments(path: string): TrustedDocuments {
  const manifest = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
  const documents = new Map<string, string>();
  for (const [key, document] of Object.entries(manifest)) {
    const hash = key.replace(/^sha256:/, '').toLowerCase();
    if (typeof document !== 'string' || sha256(document) !== hash)
      throw new Error(`Trusted documents manifest ${path}: ${key} is not the sha256 of its document.`);
    documents.set(hash, document);
  }
  return documents;
}

/**
 * With trusted documents on, /graphql runs only the manifest's operations: a request names one by
 * `documentId` (`sha256:<hex>` or `<hex>`) or Apollo's `extensions.persistedQuery.sha256Hash`, or sends a
 * document whose text is in the manifest. Anything else is refused before it is parsed.
 */
export function useTrustedDocuments(documents: TrustedDocuments | undefined): Plugin {
  if (!documents) return {};
  return {
    onParams({ params, setParams }) {
      const extended = params as typeof params & { documentId?: unknown };
      const persisted = (params.extensions?.persistedQuery as { sha256Hash?: unknown } | undefined)
        ?.sha256Hash;
      const id = extended.documentId ?? persisted;
      if (typeof id === 'string') {
        const query = documents.get(id.replace(/^sha256:/, '').toLowerCase());
        if (query === undefined)
          throw createGraphQLError(`No trusted document has the id ${id}.`, {
            extensions: { code: 'TRUSTED_DOCUMENT_NOT_FOUND', http: { status: 400 } },
          });
        const { variables, operationName, extensions } = params;
        return setParams({ query, variables, operationName, extensions });
      }
      if (typeof params.query === 'string' && documents.has(sha256(params.query))) return;
      throw createGraphQLError(
        'This server runs trusted documents only: send the documentId of an operation in its manifest.',
        { extensions: { code: 'TRUSTED_DOCUMENT_REQUIRED', http: { status: 403 } } },
      );
    },
  };
}
