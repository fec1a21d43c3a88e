import { Migration } from '@mikro-orm/migrations';

/**
 * A credit-only invoice of a billing run or a proration (its total below zero) puts its credit on the
 * customer's balance: a balance transaction of type `invoice_credit` naming that invoice.
 */
export class Migration20261125183100InvoiceCreditBalance extends Migration {
  override up(): void {
    this.addSql(`
      alter table balance_transaction drop constraint balance_transaction_type_check;
      alter table balance_transaction add constraint balance_transaction_type_check
        check (type in ('overpayment', 'credit_note', 'applied', 'refund', 'invoice_credit'));
    `);
  }

  override down(): void {
    this.addSql(`
      alter table balance_transaction drop constraint balance_transaction_type_check;
      alter table balance_transaction add constraint balance_transaction_type_check
        check (type in ('overpayment', 'credit_note', 'applied', 'refund'));
    `);
  }
}
