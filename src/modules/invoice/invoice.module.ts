import './invoice.graphql.ts';
import './invoice-booking.graphql.ts';
import './invoice-money.graphql.ts';
import './invoice-drafts.graphql.ts';
import './invoice-numbering.graphql.ts';
import './invoice-tax.graphql.ts';
import './invoice-void.graphql.ts';
import type { BillingModule } from '../module.ts';
import {
  InvoiceItemSchema,
  InvoiceNumberingSchema,
  InvoiceSchema,
  SettlementSchema,
} from './invoice.entity.ts';
import { invoiceRoutes } from './invoice.rest.ts';
import { invoiceOverdueTasks } from './invoice-overdue.jobs.ts';

export const invoiceModule: BillingModule = {
  name: 'invoice',
  entities: [InvoiceSchema, InvoiceItemSchema, SettlementSchema, InvoiceNumberingSchema],
  routes: invoiceRoutes,
  tasks: invoiceOverdueTasks,
};
