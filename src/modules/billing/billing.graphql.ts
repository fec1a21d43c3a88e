import { Instant } from '../../dates/calendar.ts';
import { builder } from '../../graphql/builder.ts';
import { describedValues } from '../../graphql/enum-values.ts';
import { payloadType, withUserErrors } from '../../graphql/user-errors.ts';
import { LIST_BOUNDS, listCost } from '../../limits/query-cost.ts';
import type { Invoice, InvoiceItem } from '../invoice/invoice.entity.ts';
import { InvoiceRef } from '../invoice/invoice.graphql.ts';
import { invoiceLoaders } from '../invoice/invoice.reads.ts';
import type { PreviewInvoice } from './billing-customer.service.ts';
import {
  BILLING_RUN_STATUSES,
  BILLING_RUN_TRIGGERS,
  type BillingRun,
  type BillingRunError,
} from './billing-run.entity.ts';
import { BillingRunService } from './billing-run.service.ts';

const BillingRunStatusEnum = builder.enumType('BillingRunStatus', {
  values: describedValues(BILLING_RUN_STATUSES, {
    running: 'Still billing customers.',
    succeeded: 'Every due customer was billed.',
    failed: 'Some customers could not be billed (see errors), or the run broke off.',
    interrupted: 'Stopped between two customers, or its process died; the next run carries on.',
  }),
  description:
    'running; succeeded; failed (some customers could not be billed, see errors, or the run broke off); ' +
    'interrupted (stopped between two customers, or its process died; the next run carries on).',
});
const BillingRunTriggerEnum = builder.enumType('BillingRunTrigger', {
  description: 'What started a billing run.',
  values: describedValues(BILLING_RUN_TRIGGERS, {
    api: 'Asked for through the API (billingRunCreate).',
    schedule: 'The scheduled run.',
    test_clock: 'A test clock advancing.',
  }),
});

const BillingRunErrorRef = builder.objectRef<BillingRunError>('BillingRunError').implement({
  description: 'A customer the run could not bill; nothing of that customer was billed by the run.',
  fields: (t) => ({
    customerId: t.expose('customerId', { type: 'UUID', description: 'The customer’s id.' }),
    message: t.exposeString('message', {
      description: 'Why it could not be billed, in English, for a developer.',
    }),
  }),
});

const BillingRunRef = builder.objectRef<BillingRun>('BillingRun').implement({
  description: 'A billing run of this environment and what it billed.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID', description: 'Its id, a UUID.' }),
    asOf: t.expose('asOf', { type: 'DateTime', description: 'Everything due by then was billed.' }),
    triggeredBy: t.expose('triggeredBy', {
      type: BillingRunTriggerEnum,
      description: 'What started the run.',
    }),
    testClockId: t.expose('testClockId', {
      type: 'UUID',
      nullable: true,
      description: 'The test clock whose customers (only) the run billed; null: the customers on no clock.',
    }),
    status: t.expose('status', {
      type: BillingRunStatusEnum,
      description: 'Running, succeeded, failed or interrupted.',
    }),
    startedAt: t.expose('startedAt', { type: 'DateTime', description: 'When it started (ISO 8601, UTC).' }),
    finishedAt: t.expose('finishedAt', {
      type: 'DateTime',
      nullable: true,
      description: 'When it finished (ISO 8601, UTC); null while it runs.',
    }),
    invoiceCount: t.exposeInt('invoiceCount', { description: 'Invoices the run made.' }),
    periodCount: t.exposeInt('periodCount', { description: 'Item periods billed (with or without usage).' }),
    renewalCount: t.exposeInt('renewalCount', { description: 'Terms renewed.' }),
    endedCount: t.exposeInt('endedCount', { description: 'Subscriptions that ended.' }),
    customersHandedOut: t.exposeInt('customersHandedOut', {
      description:
        'Customers with work handed to the batches so far, by every process billing the run. Above customersDone while batches are under way.',
    }),
    customersDone: t.exposeInt('customersDone', {
      description:
        'Customers whose batch has committed: billed, or listed in errors. Below customersHandedOut at the end when a process stopped with a batch unfinished: the run then ends interrupted, and the next one bills those customers.',
    }),
    invoiceIds: t.expose('invoiceIds', { type: ['UUID'], description: 'The invoices created, in order.' }),
    invoices: t.field({
      type: [InvoiceRef],
      description: 'The invoices created that still exist (a draft may have been deleted since).',
      complexity: listCost(LIST_BOUNDS.billingRunInvoices),
      resolve: async (run, _args, ctx) =>
        (await ctx.loaders.of(invoiceLoaders).byId.loadMany(run.invoiceIds)).filter(
          (invoice): invoice is Invoice => invoice != null && !(invoice instanceof Error),
        ),
    }),
    errors: t.field({
      description: 'The customers the run could not bill.',
      type: [BillingRunErrorRef],
      complexity: listCost(LIST_BOUNDS.billingRunErrors),
      resolve: (run) => run.errors,
    }),
  }),
});

const InvoicePreviewLineRef = builder.objectRef<InvoiceItem>('InvoicePreviewLine').implement({
  description: 'A line of a previewed invoice, with the figures the run would write.',
  fields: (t) => ({
    quantity: t.float({
      resolve: (item) => Number(item.quantity),
      description: 'The quantity billed (up to 6 decimals).',
    }),
    unitAmount: t.float({
      resolve: (item) => Number(item.unitAmount),
      description: 'The price of one unit, in minor units (may have decimals).',
    }),
    sku: t.exposeString('sku', {
      nullable: true,
      description: 'The article number, as printed; null when none.',
    }),
    title: t.exposeString('title', { description: 'The line’s title, as printed.' }),
    description: t.exposeString('description', {
      nullable: true,
      description: 'More text under the title; null when none.',
    }),
    periodStart: t.expose('periodStart', {
      type: 'Date',
      nullable: true,
      description: 'First day the line covers (ISO 8601 date); null for a line without a period.',
    }),
    periodEnd: t.expose('periodEnd', {
      type: 'Date',
      nullable: true,
      description: 'Last day the line covers (ISO 8601 date); null for a line without a period.',
    }),
    taxRate: t.float({
      description: 'Percentage (19 is 19 %); null for an untaxed line.',
      nullable: true,
      resolve: (item) => (item.taxRate == null ? null : Number(item.taxRate)),
    }),
    amount: t.exposeInt('amount', { description: 'The net amount, in minor units.' }),
    taxAmount: t.exposeInt('taxAmount', { description: 'The tax on the line, in minor units.' }),
  }),
});

const InvoicePreviewRef = builder.objectRef<PreviewInvoice>('InvoicePreview').implement({
  description: 'An invoice the next billing run would create (before booking, which numbers it).',
  fields: (t) => ({
    customerId: t.field({
      type: 'UUID',
      resolve: ({ invoice }) => invoice.customerId,
      description: 'The customer’s id.',
    }),
    currency: t.string({
      resolve: ({ invoice }) => invoice.currency,
      description: 'ISO 4217 currency code, e.g. EUR.',
    }),
    date: t.field({
      type: 'Date',
      resolve: ({ invoice }) => invoice.date,
      description: 'The invoice date it would have (ISO 8601 date).',
    }),
    dueDate: t.field({
      type: 'Date',
      nullable: true,
      resolve: ({ invoice }) => invoice.dueDate ?? null,
      description: 'The day payment would be due (ISO 8601 date); null without a payment term.',
    }),
    totalExclVat: t.int({
      resolve: ({ invoice }) => invoice.totalExclVat,
      description: 'The total excluding VAT, in minor units.',
    }),
    totalVat: t.int({ resolve: ({ invoice }) => invoice.totalVat, description: 'The VAT, in minor units.' }),
    totalInclVat: t.int({
      resolve: ({ invoice }) => invoice.totalInclVat,
      description: 'The total including VAT, in minor units.',
    }),
    items: t.field({
      type: [InvoicePreviewLineRef],
      resolve: ({ items }) => items,
      description: 'The lines it would have.',
    }),
  }),
});

const BillingRunCreatePayload = payloadType('BillingRunCreatePayload', 'billingRun', BillingRunRef);

builder.queryFields((t) => ({
  invoicePreview: t.field({
    type: [InvoicePreviewRef],
    nullable: true,
    description:
      "The invoices the next billing run as of `asOf` (default now) would create for the customer, or for the subscription only (default: the customer's now, its test clock's frozen time when it has one): every due period and every waiting proration line, priced, taxed and totalled by the run's own code, with nothing written. One per currency; none when nothing is due; null when the customer or subscription does not exist.",
    args: {
      customerId: t.arg({
        type: 'UUID',
        description: 'The customer to preview; either this or subscriptionId.',
      }),
      subscriptionId: t.arg({
        type: 'UUID',
        description: 'The subscription to preview; either this or customerId.',
      }),
      asOf: t
        .arg({ type: 'DateTime', description: 'The moment to bill as of (ISO 8601); now when left out.' })
        .validate(Instant.nullish()),
    },
    resolve: (_root, { customerId, subscriptionId, asOf }, ctx) =>
      new BillingRunService(ctx).preview({ customerId, subscriptionId }, asOf ?? null),
  }),
  billingRun: t.field({
    description: 'The billing run with this id; null when this environment has none.',
    type: BillingRunRef,
    nullable: true,
    args: { id: t.arg({ type: 'UUID', required: true, description: 'The id of the object meant.' }) },
    resolve: (_root, { id }, ctx) => new BillingRunService(ctx).find(id),
  }),
  billingRuns: t.connection(
    {
      type: BillingRunRef,
      description: 'Billing runs of this environment, oldest first.',
      resolve: (_root, args, ctx) => new BillingRunService(ctx).list(args),
    },
    { name: 'BillingRunConnection' },
    { name: 'BillingRunEdge' },
  ),
}));

builder.mutationFields((t) => ({
  billingRunCreate: t.field({
    type: BillingRunCreatePayload,
    description:
      'Bills everything due at `asOf` (default now) in this environment and answers what was billed. ' +
      'Refused (CONFLICT) while another run of the environment is under way. A live environment bills ' +
      'the present only: an `asOf` later than now (beyond 5 minutes of clock skew) is INVALID_INPUT ' +
      'there; test environments may bill any moment. Customers on a test clock are billed only by the clock (testClockAdvance).',
    args: {
      asOf: t
        .arg({ type: 'DateTime', description: 'The moment to bill as of (ISO 8601); now when left out.' })
        .validate(Instant.nullish()),
    },
    resolve: (_root, { asOf }, ctx) =>
      withUserErrors('billingRun', () =>
        new BillingRunService(ctx).run(asOf ?? new Date(), { triggeredBy: 'api' }),
      ),
  }),
}));
