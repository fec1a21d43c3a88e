import { p } from '@mikro-orm/core';
import { newId } from './ids.ts';

/**
 * The keys of a row that belongs to one environment: its UUIDv7 id, made when the row is created, and
 * the environment row-level security holds it to. Spread first into an entity's `properties`; an entity
 * whose keys differ (another index, a composite key, no environment) declares its own.
 */
export const tenantKeys = () => ({
  id: p
    .uuid()
    .primary()
    .onCreate(() => newId()),
  environmentId: p.uuid(),
});
