import { hash, randomBytes } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { leanFind } from '../db/lean.ts';
import { type ApiToken, ApiTokenSchema, type TokenScope } from './api-token.entity.ts';
import {
  type Environment,
  type EnvironmentKind,
  EnvironmentSchema,
  type TaxRounding,
} from './environment.entity.ts';
import type { TokenCache } from './token-cache.ts';

const TOKEN_PREFIX = 'bg_';

export const hashSecret = (secret: string): string => hash('sha256', secret, 'hex');

export type AccessDecision =
  | { ok: true; token: ApiToken; environmentId: string }
  | { ok: false; reason: 'unauthenticated' | 'forbidden' };

/** Environments and API tokens: the administration behind the CLI and the check behind every request. */
export class AccessService {
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  async createEnvironment(
    name: string,
    kind: EnvironmentKind = 'live',
    taxRounding: TaxRounding = 'document',
    timezone = 'UTC',
  ): Promise<Environment> {
    const environment = this.em.create(EnvironmentSchema, { name, kind, taxRounding, timezone });
    await this.em.flush();
    return environment;
  }

  listEnvironments(): Promise<Environment[]> {
    return this.em.find(EnvironmentSchema, {}, { orderBy: { id: 'asc' } });
  }

  /** The environment a request acts in (readable by the application role). */
  environment(id: string): Promise<Environment> {
    return this.em.findOneOrFail(EnvironmentSchema, { id });
  }

  /** Creates a token granted to `environmentIds`; the secret is returned here and never again. */
  async createToken(
    environmentIds: string[],
    name?: string,
    scope: TokenScope = 'write',
  ): Promise<{ token: ApiToken; secret: string }> {
    const found = await this.em.count(EnvironmentSchema, { id: { $in: environmentIds } });
    if (found !== new Set(environmentIds).size) {
      throw new Error(`unknown environment among: ${environmentIds.join(', ')}`);
    }
    const secret = TOKEN_PREFIX + randomBytes(32).toString('base64url');
    const token = this.em.create(ApiTokenSchema, {
      name: name ?? null,
      scope,
      prefix: secret.slice(0, 10),
      secretHash: hashSecret(secret),
      environmentIds: [...new Set(environmentIds)],
    });
    await this.em.flush();
    return { token, secret };
  }

  listTokens(): Promise<ApiToken[]> {
    return this.em.find(ApiTokenSchema, {}, { orderBy: { id: 'asc' } });
  }

  /** Revokes a token; returns false when no such token exists. */
  async revokeToken(id: string): Promise<boolean> {
    const token = await this.em.findOne(ApiTokenSchema, { id });
    if (!token) return false;
    token.revokedAt ??= new Date();
    await this.em.flush();
    return true;
  }

  /**
   * Checks a presented secret against the environment it asks for (every request: a lean read, or the
   * token cache when one is given).
   */
  async authorize(secret: string, environmentId: string, cache?: TokenCache): Promise<AccessDecision> {
    const secretHash = hashSecret(secret);
    let token = cache?.get(secretHash);
    if (!token) {
      const generation = cache?.generation() ?? 0;
      [token] = await leanFind(this.em, ApiTokenSchema, { secretHash, revokedAt: null }, { limit: 1 });
      if (token) cache?.set(secretHash, token, generation);
    }
    if (!token) return { ok: false, reason: 'unauthenticated' };
    if (!token.environmentIds.includes(environmentId)) return { ok: false, reason: 'forbidden' };
    // One write per request would serialise on the token row; a minute of precision is plenty.
    const now = Date.now();
    const lastUsedAt = cache?.lastUsedAt(secretHash) ?? token.lastUsedAt?.getTime();
    if (!lastUsedAt || now - lastUsedAt > 60_000) {
      cache?.touched(secretHash, now);
      await this.em
        .createQueryBuilder(ApiTokenSchema)
        .update({ lastUsedAt: new Date(now) })
        .where({ id: token.id })
        .execute();
    }
    return { ok: true, token, environmentId };
  }
}
