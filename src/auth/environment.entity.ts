import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { newId } from '../db/ids.ts';

/** A tenant: every billing row belongs to exactly one environment. */
export const EnvironmentSchema = defineEntity({
  name: 'Environment',
  tableName: 'environment',
  properties: {
    id: p
      .uuid()
      .primary()
      .onCreate(() => newId()),
    name: p.string().length(200),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});

export type Environment = InferEntity<typeof EnvironmentSchema>;
