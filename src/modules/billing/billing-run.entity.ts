import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { tenantKeys } from '../../db/tenant-keys.ts';

export const BILLING_RUN_STATUSES = ['running', 'succeeded', 'failed', 'interrupted'] as const;
export type BillingRunStatus = (typeof BILLING_RUN_STATUSES)[number];

export const BILLING_RUN_TRIGGERS = ['api', 'schedule', 'test_clock'] as const;
export type BillingRunTrigger = (typeof BILLING_RUN_TRIGGERS)[number];

/** A customer the run could not bill, and why; the run went on with the others. */
export type BillingRunError = { customerId: string; message: string };

/** One billing run of one environment: what it was asked to do and, as it goes, what it did. */
export const BillingRunSchema = defineEntity({
  name: 'BillingRun',
  tableName: 'billing_run',
  properties: {
    ...tenantKeys(),
    asOf: p.datetime(),
    triggeredBy: p.enum(BILLING_RUN_TRIGGERS),
    /** The test clock whose customers (only) the run billed; null: the customers on no clock. */
    testClockId: p.uuid().nullable(),
    status: p.enum(BILLING_RUN_STATUSES),
    startedAt: p.datetime(),
    finishedAt: p.datetime().nullable(),
    invoiceCount: p.integer(),
    periodCount: p.integer(),
    renewalCount: p.integer(),
    endedCount: p.integer(),
    invoiceIds: p.array().columnType('uuid[]'),
    errors: p.json<BillingRunError[]>(),
    /**
     * The last customer handed to a batch: the next batch's customers come after it (ALL_HANDED_OUT once
     * there are none). On the row, so that the batches of every process billing the run take customers
     * no other has.
     */
    handedOutAfter: p.uuid(),
    /** Customers handed to batches so far. */
    customersHandedOut: p.integer(),
    /** Customers whose batch has committed: billed, or recorded in `errors`. */
    customersDone: p.integer(),
  },
});

export type BillingRun = InferEntity<typeof BillingRunSchema>;

/** A run's hand-out point before its first batch: every customer id comes after it. */
export const NONE_HANDED_OUT = '00000000-0000-0000-0000-000000000000';
/** A run's hand-out point once every customer with work has been handed out. */
export const ALL_HANDED_OUT = 'ffffffff-ffff-ffff-ffff-ffffffffffff';

/** One period of one subscription item, billed once: the unique key of the table guarantees it. */
export const BilledPeriodSchema = defineEntity({
  name: 'BilledPeriod',
  tableName: 'billed_period',
  properties: {
    ...tenantKeys(),
    subscriptionItemId: p.uuid(),
    periodStart: p.date(),
    periodEnd: p.date(),
    quantity: p.decimal('string').precision(21).scale(6),
    amount: p.bigint('number'),
    billingRunId: p.uuid(),
    invoiceId: p.uuid().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});

export type BilledPeriod = InferEntity<typeof BilledPeriodSchema>;
