import { z } from 'zod';
import { Uuid } from '../../validation.ts';
import { CREDIT_OUTCOMES, CREDIT_REASONS } from './invoice.entity.ts';
import { CreditNoteCreateInput, exactDecimal, MAX_LINES_PER_INVOICE } from './invoice.input.ts';

const PositiveMinorUnits = z.number().int().positive().max(Number.MAX_SAFE_INTEGER);

/** Part of an invoice line: `quantity` of its units, or `amount` (net, minor units) of it. */
const CreditNoteLine = z
  .strictObject({
    itemId: Uuid,
    quantity: z.number().positive().pipe(exactDecimal(6)).nullish(),
    amount: PositiveMinorUnits.nullish(),
  })
  .refine((line) => (line.quantity == null) !== (line.amount == null), {
    message: 'give either quantity or amount',
    path: ['amount'],
  });

/** A line that credits no invoice line: a goodwill credit, a fee returned. */
const CreditNoteFreeLine = z.strictObject({
  title: z.string().trim().min(1).max(500),
  amount: PositiveMinorUnits,
  taxCode: z.string().min(1).max(64).nullish(),
});

export const CreditNoteInput = CreditNoteCreateInput.extend({
  lines: z
    .array(CreditNoteLine)
    .max(MAX_LINES_PER_INVOICE)
    .refine(
      (lines) => new Set(lines.map((line) => line.itemId)).size === lines.length,
      'must not name a line twice',
    )
    .nullish(),
  freeLines: z.array(CreditNoteFreeLine).max(MAX_LINES_PER_INVOICE).nullish(),
  reason: z.enum(CREDIT_REASONS).nullish(),
  outcome: z.enum(CREDIT_OUTCOMES).nullish(),
}).refine((input) => !(input.itemIds && (input.lines || input.freeLines)), {
  message: 'itemIds credits whole lines; use lines and freeLines instead, not both',
  path: ['itemIds'],
});
export type CreditNoteInput = z.infer<typeof CreditNoteInput>;
export type CreditNoteLine = z.infer<typeof CreditNoteLine>;
export type CreditNoteFreeLine = z.infer<typeof CreditNoteFreeLine>;
