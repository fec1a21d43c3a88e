import type { EntityManager } from '@mikro-orm/postgresql';
import type { ServiceContext } from '../../context.ts';
import { today } from '../../dates/calendar.ts';
import { DomainError } from '../../errors.ts';
import { CustomerSchema } from '../customer/customer.entity.ts';
import { forgetInvoices } from '../invoice/invoice.change.ts';
import { postRefund } from '../ledger/ledger-journal.service.ts';
import { type CustomerBalance, type Refund, RefundSchema } from './balance.entity.ts';
import type { RefundCreateInput } from './balance.input.ts';
import { balanceLoaders } from './balance.reads.ts';
import { CreditBalanceService } from './balance.service.ts';

/** Money paid back to a customer out of its credit balance. */
export class RefundService {
  private readonly ctx: ServiceContext;

  constructor(ctx: ServiceContext) {
    this.ctx = ctx;
  }

  /** Records a refund and takes it off the balance; refused when the balance holds less. */
  async create(
    customerId: string,
    input: RefundCreateInput,
  ): Promise<{ refund: Refund; balance: CustomerBalance }> {
    const { environmentId } = this.ctx;
    const result = await this.ctx.em.transactional(
      async (em) => {
        const tx = em as EntityManager;
        const customer = await tx.findOne(CustomerSchema, { id: customerId, environmentId });
        if (!customer) throw DomainError.notFound('Customer', customerId);
        const currency = input.currency ?? customer.currency;
        if (!currency) {
          throw DomainError.onField('INVALID_INPUT', ['currency'], 'the customer has no currency; name one');
        }
        const balances = new CreditBalanceService(this.ctx);
        const balance = await balances.lock(tx, customerId, currency);
        if (input.amount > balance.amount) {
          throw DomainError.onField(
            'CONFLICT',
            ['amount'],
            `the customer's ${currency} balance is ${balance.amount}; it cannot refund ${input.amount}`,
          );
        }
        const date = input.date ?? today();
        const refund = tx.create(RefundSchema, {
          environmentId,
          customerId,
          currency,
          amount: input.amount,
          creditNoteId: null,
          date,
          reference: input.reference ?? null,
          note: input.note ?? null,
        });
        await balances.draw(
          tx,
          balance,
          input.amount,
          { type: 'refund', refundId: refund.id },
          {
            date,
            note: 'Refunded from the credit balance',
          },
        );
        await tx.flush();
        await postRefund(this.ctx, tx, refund);
        return { refund, balance };
      },
      { clear: true },
    );
    forgetInvoices(this.ctx);
    this.ctx.loaders.forget(balanceLoaders);
    return result;
  }
}
