import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { newId } from '../db/ids.ts';

/** `read`: queries and GET; `write`: everything, mutations and REST writes included. */
export const TOKEN_SCOPES = ['read', 'write'] as const;
export type TokenScope = (typeof TOKEN_SCOPES)[number];

/** An API credential. Only the SHA-256 of the secret is kept; `prefix` lets people tell tokens apart. */
export const ApiTokenSchema = defineEntity({
  name: 'ApiToken',
  tableName: 'api_token',
  uniques: [{ name: 'api_token_secret_hash_key', properties: ['secretHash'] }],
  properties: {
    id: p
      .uuid()
      .primary()
      .onCreate(() => newId()),
    name: p.string().length(200).nullable(),
    prefix: p.string().length(16),
    secretHash: p.string().length(64),
    environmentIds: p.array().columnType('uuid[]'),
    scope: p.enum(TOKEN_SCOPES).default('write'),
    createdAt: p.datetime().onCreate(() => new Date()),
    lastUsedAt: p.datetime().nullable(),
    revokedAt: p.datetime().nullable(),
  },
});

export type ApiToken = InferEntity<typeof ApiTokenSchema>;
