import type { RequestContext } from '../../context.ts';
import { today } from '../../dates/calendar.ts';
import { builder } from '../../graphql/builder.ts';
import { reads } from '../../graphql/columns.ts';
import { describedValues } from '../../graphql/enum-values.ts';
import { payloadType, type UserError, UserErrorRef, withUserErrors } from '../../graphql/user-errors.ts';
import { clockLoaders } from '../clock/clock.now.ts';
import type { Invoice, Settlement } from './invoice.entity.ts';
import { InvoiceRef, SettlementRef } from './invoice.graphql.ts';
import { COLLECTION_STATUSES, collectionStatus, daysOverdue } from './invoice-collection.ts';
import { InvoiceVoidService } from './invoice-void.service.ts';

/** Today (UTC) for the invoice's customer: its test clock's day when it has one. */
const customerToday = async (ctx: RequestContext, invoice: Invoice) =>
  today(await ctx.loaders.of(clockLoaders).nowByCustomerId.load(invoice.customerId));

const CollectionStatusEnum = builder.enumType('CollectionStatus', {
  description: 'Where a booked invoice stands in collection.',
  values: describedValues(COLLECTION_STATUSES, {
    open: 'Something is still due on it.',
    paid: 'Settled in full (payments, credit notes or balance).',
    void: 'Voided: it keeps its number and nothing is due.',
    uncollectible: 'Written off as uncollectible; what was due stays recorded.',
  }),
});

builder.objectFields(InvoiceRef, (t) => ({
  voidedAt: t.expose('voidedAt', {
    type: 'DateTime',
    nullable: true,
    description: 'When the invoice was voided; it keeps its number and nothing is due on it.',
  }),
  uncollectibleAt: t.expose('uncollectibleAt', {
    type: 'DateTime',
    nullable: true,
    description: 'When the invoice was written off as uncollectible.',
  }),
  collectionStatus: t.field({
    type: CollectionStatusEnum,
    nullable: true,
    description:
      'What became of a booked invoice: void, uncollectible (while something is due), paid (nothing due) or open; null for a draft. `status` stays as the contract lists it.',
    extensions: reads('status', 'voidedAt', 'totalInclVat', 'settledAmount', 'uncollectibleAt'),
    resolve: (invoice) => collectionStatus(invoice),
  }),
  overdue: t.boolean({
    description:
      "An open invoice with something due after its dueDate (UTC days; the customer's test clock's days when it has one).",
    resolve: async (invoice, _args, ctx) => daysOverdue(invoice, await customerToday(ctx, invoice)) > 0,
  }),
  daysOverdue: t.int({
    description: 'Days since the dueDate of an overdue invoice (1 the day after it); 0 otherwise.',
    resolve: async (invoice, _args, ctx) => daysOverdue(invoice, await customerToday(ctx, invoice)),
  }),
}));

builder.objectField(SettlementRef, 'reversesSettlementId', (t) =>
  t.expose('reversesSettlementId', {
    type: 'UUID',
    nullable: true,
    description: 'On a reversal: the settlement it cancels.',
  }),
);

type Payload<T> = { result: T | null; userErrors: UserError[] };

const InvoiceVoidPayload = payloadType('InvoiceVoidPayload', 'invoice', InvoiceRef);
const InvoiceMarkUncollectiblePayload = payloadType('InvoiceMarkUncollectiblePayload', 'invoice', InvoiceRef);

const SettlementReversePayload = builder
  .objectRef<Payload<{ invoice: Invoice; settlement: Settlement }>>('SettlementReversePayload')
  .implement({
    description: 'The outcome of settlementReverse.',
    fields: (t) => ({
      invoice: t.field({
        type: InvoiceRef,
        nullable: true,
        description: 'The invoice the reversed settlement was on, as it stands now; null on failure.',
        resolve: (payload) => payload.result?.invoice ?? null,
      }),
      reversal: t.field({
        type: SettlementRef,
        nullable: true,
        description: 'The new, negative settlement.',
        resolve: (payload) => payload.result?.settlement ?? null,
      }),
      userErrors: t.field({
        type: [UserErrorRef],
        description: 'Why the mutation changed nothing; empty when it succeeded.',
        resolve: (payload) => payload.userErrors,
      }),
    }),
  });

builder.mutationFields((t) => ({
  invoiceVoid: t.field({
    type: InvoiceVoidPayload,
    description:
      'Voids a booked invoice with no settlements standing and no credit note: it keeps its number, owes nothing.',
    args: { id: t.arg({ type: 'UUID', required: true, description: 'The id of the object meant.' }) },
    resolve: (_root, { id }, ctx) => withUserErrors('invoice', () => new InvoiceVoidService(ctx).void(id)),
  }),
  invoiceMarkUncollectible: t.field({
    type: InvoiceMarkUncollectiblePayload,
    description: 'Writes off a booked invoice that still has something due; it leaves the overdue list.',
    args: { id: t.arg({ type: 'UUID', required: true, description: 'The id of the object meant.' }) },
    resolve: (_root, { id }, ctx) =>
      withUserErrors('invoice', () => new InvoiceVoidService(ctx).markUncollectible(id)),
  }),
  settlementReverse: t.field({
    type: SettlementReversePayload,
    description: 'Cancels a settlement with a negative one that names it; each settlement is reversed once.',
    args: {
      settlementId: t.arg({ type: 'UUID', required: true, description: 'The settlement to reverse.' }),
      reason: t.arg.string({ description: 'Kept as the reversal’s note (at most 1000 characters).' }),
    },
    resolve: (_root, { settlementId, reason }, ctx) =>
      withUserErrors('result', () =>
        new InvoiceVoidService(ctx).reverseSettlement(settlementId, reason ?? null),
      ),
  }),
}));
