import { z } from 'zod';
import { CalendarDate } from '../../dates/calendar.ts';
import { CurrencyCode } from '../../money/currency.ts';

export const RefundCreateInput = z.strictObject({
  currency: CurrencyCode.nullish(),
  amount: z.number().int().positive().max(Number.MAX_SAFE_INTEGER),
  date: CalendarDate.nullish(),
  reference: z.string().max(250).nullish(),
  note: z.string().max(1000).nullish(),
});
export type RefundCreateInput = z.infer<typeof RefundCreateInput>;
