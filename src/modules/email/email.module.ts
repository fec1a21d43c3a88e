import './email.graphql.ts';
import type { BillingModule } from '../module.ts';
import { EmailSettingsSchema, InvoiceEmailSchema } from './email.entity.ts';
import { EMAILED_EVENTS, emailTasks } from './email.jobs.ts';
import { INVOICE_EMAIL_TASK } from './email.service.ts';

export const emailModule: BillingModule = {
  name: 'email',
  entities: [EmailSettingsSchema, InvoiceEmailSchema],
  routes: [],
  tasks: emailTasks,
  eventListeners: [{ task: INVOICE_EMAIL_TASK, types: EMAILED_EVENTS }],
};
