import type { EntitySchema } from '@mikro-orm/core';
import type { TaskList } from 'graphile-worker';
import type { EventListener, JobDependencies } from '../jobs/runner.ts';
import type { Route } from '../rest/router.ts';

/**
 * What a domain module adds to the service: its tables, its documented REST paths and its background
 * tasks (jobs of the queue, src/jobs/) with the events they act on. Its GraphQL
 * types register themselves when the module's file imports its `<domain>.graphql.ts`. The registry
 * (src/modules/registry.ts) lists every module once.
 */
export type BillingModule = {
  name: string;
  entities: readonly EntitySchema[];
  routes: readonly Route[];
  tasks?: (dependencies: JobDependencies) => TaskList;
  /** Events this module acts on, each through one of its tasks. */
  eventListeners?: readonly EventListener[];
};
