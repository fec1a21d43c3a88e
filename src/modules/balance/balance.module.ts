import './balance.graphql.ts';
import type { BillingModule } from '../module.ts';
import { BalanceTransactionSchema, CustomerBalanceSchema, RefundSchema } from './balance.entity.ts';

export const balanceModule: BillingModule = {
  name: 'balance',
  entities: [CustomerBalanceSchema, BalanceTransactionSchema, RefundSchema],
  routes: [],
};
