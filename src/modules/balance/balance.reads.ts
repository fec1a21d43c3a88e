import type { LoaderSet, ServiceContext } from '../../context.ts';
import { leanById, leanByParent } from '../../db/loaders.ts';
import { type Connection, leanKeysetPage, type PageArgs } from '../../db/pagination.ts';
import {
  type BalanceTransaction,
  BalanceTransactionSchema,
  CustomerBalanceSchema,
  type Refund,
  RefundSchema,
} from './balance.entity.ts';

/** The balance module's batched reads, built once per request. */
export const balanceLoaders = ((em, environmentId) => ({
  balancesByCustomerId: leanByParent(em, environmentId, CustomerBalanceSchema, 'customerId'),
  refundById: leanById(em, environmentId, RefundSchema),
})) satisfies LoaderSet<unknown>;

/** The module's one home for reading balances, their movements and refunds. */
export class BalanceReads {
  private readonly ctx: ServiceContext;

  constructor(ctx: ServiceContext) {
    this.ctx = ctx;
  }

  refund(id: string): Promise<Readonly<Refund> | null> {
    return this.ctx.loaders.of(balanceLoaders).refundById.load(id);
  }

  transactions(customerId: string, page: PageArgs): Promise<Connection<BalanceTransaction>> {
    return leanKeysetPage(
      this.ctx.em,
      BalanceTransactionSchema,
      { environmentId: this.ctx.environmentId, customerId },
      page,
    );
  }

  refunds(customerId: string, page: PageArgs): Promise<Connection<Refund>> {
    return leanKeysetPage(
      this.ctx.em,
      RefundSchema,
      { environmentId: this.ctx.environmentId, customerId },
      page,
    );
  }
}
