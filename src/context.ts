import type { EntityManager } from '@mikro-orm/postgresql';
import { setAuditContext } from './audit/audit.context.ts';
import type { ApiToken } from './auth/api-token.entity.ts';
import { fenceReplicaReads, inEnvironment, markAtomic } from './db/tenant-transaction.ts';

/** A module's batch loaders for one request, built from the request's EntityManager and environment. */
export type LoaderSet<T> = (em: EntityManager, environmentId: string) => T;

/**
 * The request's dataloaders. Each module declares its set (`<domain>.reads.ts`); a set is built the
 * first time the request uses it and kept for the rest of the request, so a request builds only the
 * loaders it needs, once. A service that changed rows a set may hold forgets that set.
 */
export class RequestLoaders {
  private readonly em: EntityManager;
  private readonly environmentId: string;
  private readonly built = new Map<LoaderSet<unknown>, unknown>();

  constructor(em: EntityManager, environmentId: string) {
    this.em = em;
    this.environmentId = environmentId;
  }

  of<T>(set: LoaderSet<T>): T {
    let loaders = this.built.get(set) as T | undefined;
    if (loaders === undefined) {
      loaders = set(this.em, this.environmentId);
      this.built.set(set, loaders);
    }
    return loaders;
  }

  /** Drops what `set` has loaded: its next use reads afresh. */
  forget(set: LoaderSet<unknown>): void {
    this.built.delete(set);
  }
}

/** Everything a service needs to act for one request inside one environment. */
export type RequestContext = {
  em: EntityManager;
  environmentId: string;
  token: ApiToken;
  loaders: RequestLoaders;
  /** The app's WEBHOOK_ALLOW_PRIVATE_TARGETS (GraphQL requests only; false when absent). */
  allowPrivateWebhookTargets?: boolean;
};

/** What services that also serve the server's own jobs act with: there is no token then. */
export type ServiceContext = Omit<RequestContext, 'token'>;

export function createRequestContext(
  em: EntityManager,
  environmentId: string,
  token: ApiToken,
): RequestContext {
  setAuditContext(em, { tokenId: token.id });
  return { em, environmentId, token, loaders: new RequestLoaders(em, environmentId) };
}

/** A context for a job of the server itself; `operation` names the job in the audit trail. */
export function createJobContext(
  em: EntityManager,
  environmentId: string,
  operation: string,
): ServiceContext {
  setAuditContext(em, { operation });
  return { em, environmentId, loaders: new RequestLoaders(em, environmentId) };
}

/**
 * Runs one request's database work in its environment's transaction, on a request context whose
 * EntityManager and dataloaders belong to that transaction. `readOnly`: a plain read, which a
 * replica may serve (DATABASE_REPLICA_URLS). `atomic`: the request succeeds or fails as a whole (a
 * REST request), so work directly in its transaction takes no savepoint (markAtomic). `only`: this is
 * the request's one transaction (a REST request's, a GraphQL query's; not a mutation field's): it
 * then runs on the context's own EntityManager (authenticate's fork, which has loaded no entity)
 * rather than on a fork of it.
 */
export function inRequestTransaction<T>(
  ctx: RequestContext,
  work: (ctx: RequestContext) => Promise<T>,
  options: { readOnly?: boolean; atomic?: boolean; only?: boolean } = {},
): Promise<T> {
  return inEnvironment(
    ctx.em,
    ctx.environmentId,
    (tx) => {
      if (options.atomic) markAtomic(tx);
      return work(createRequestContext(tx, ctx.environmentId, ctx.token));
    },
    options.readOnly ? { tokenId: ctx.token.id } : undefined,
    { ownFork: options.atomic === true || options.only === true },
  );
}

/**
 * After a request that may have written (anything but a plain read) by `ctx`'s token: its next reads
 * wait for a replica to have replayed it (fenceReplicaReads). A failure to record it is logged, not
 * answered: the write itself has committed.
 */
export async function afterWrite(ctx: RequestContext, onError: (error: unknown) => void): Promise<void> {
  await fenceReplicaReads(ctx.em, ctx.token.id).catch(onError);
}
