import type { EntityManager } from '@mikro-orm/postgresql';
import { CalendarDate } from '../../dates/calendar.ts';
import { builder } from '../../graphql/builder.ts';
import { payloadType, withUserErrors } from '../../graphql/user-errors.ts';
import { InvoiceItemRef } from '../invoice/invoice.graphql.ts';
import { type RecognitionRow, RecognitionRowSchema } from './journal.entity.ts';
import { runRecognition } from './ledger-recognition.jobs.ts';

const RecognitionRowRef = builder.objectRef<RecognitionRow>('RecognitionScheduleRow').implement({
  description:
    'One share of a deferred line: recognized (deferral to income) on its date. A credit note’s take-back from income is a posted negative row.',
  fields: (t) => ({
    date: t.expose('date', { type: 'Date', description: 'The day the share is recognised (ISO 8601 date).' }),
    amount: t.expose('amount', {
      type: 'SafeInt',
      description: 'In minor units of the currency (cents for EUR).',
    }),
    posted: t.boolean({
      resolve: (row) => row.postedEntryId !== null,
      description: 'Whether the share is posted to the ledger already.',
    }),
    cancelled: t.exposeBoolean('cancelled', { description: 'Cancelled by a void (or credited to zero).' }),
  }),
});

builder.objectField(InvoiceItemRef, 'recognitionSchedule', (t) =>
  t.field({
    type: [RecognitionRowRef],
    description: 'Empty for a line recognized at booking (strategy none, or no service period).',
    resolve: (item, _args, ctx) =>
      ctx.em.find(
        RecognitionRowSchema,
        { environmentId: ctx.environmentId, invoiceItemId: item.id },
        { orderBy: { date: 'asc', id: 'asc' } },
      ),
  }),
);

const RecognitionRunRef = builder
  .objectRef<{ upTo: string; posted: number }>('RevenueRecognitionRun')
  .implement({
    description: 'What a revenue recognition run did.',
    fields: (t) => ({
      upTo: t.expose('upTo', {
        type: 'Date',
        description: 'The day the run posted up to (exclusive, ISO 8601 date).',
      }),
      posted: t.exposeInt('posted', { description: 'Schedule rows posted by this run.' }),
    }),
  });
const RecognitionRunPayload = payloadType('RevenueRecognitionRunPayload', 'run', RecognitionRunRef);

builder.mutationFields((t) => ({
  revenueRecognitionRun: t.field({
    type: RecognitionRunPayload,
    description:
      'Posts every schedule row dated before upTo that is not posted yet (the daily job does the same up to today); a rerun posts nothing.',
    args: {
      upTo: t.arg({
        type: 'Date',
        required: true,
        description: 'Rows dated before this day are posted (ISO 8601 date).',
      }),
    },
    resolve: (_root, args, ctx) =>
      withUserErrors('run', async () => {
        const upTo = CalendarDate.parse(args.upTo);
        const posted = await runRecognition(ctx.environmentId, upTo, (work) =>
          ctx.em.transactional((tx) => work(tx as EntityManager)),
        );
        return { upTo, posted };
      }),
  }),
}));
