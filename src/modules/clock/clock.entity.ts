import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { tenantKeys } from '../../db/tenant-keys.ts';

/** ready: at its frozen time; advancing: billing its customers up to `advancingTo` (a job does it). */
export const TEST_CLOCK_STATUSES = ['ready', 'advancing'] as const;
export type TestClockStatus = (typeof TEST_CLOCK_STATUSES)[number];

/**
 * Simulated time of a test environment. Customers attached to it (at their creation) live on its
 * frozen time; it only moves forward, by testClockAdvance.
 */
export const TestClockSchema = defineEntity({
  name: 'TestClock',
  tableName: 'test_clock',
  properties: {
    ...tenantKeys(),
    name: p.string().length(200),
    frozenTime: p.datetime(),
    status: p.enum(TEST_CLOCK_STATUSES),
    advancingTo: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().nullable(),
  },
});

export type TestClock = InferEntity<typeof TestClockSchema>;
