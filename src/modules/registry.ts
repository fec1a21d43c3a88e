import type { TaskList } from 'graphile-worker';
import { ApiTokenSchema } from '../auth/api-token.entity.ts';
import { EnvironmentSchema } from '../auth/environment.entity.ts';
import { idempotencyTasks } from '../idempotency/idempotency.jobs.ts';
import type { JobDependencies } from '../jobs/runner.ts';
import type { Route } from '../rest/router.ts';
import { auditModule } from './audit/audit.module.ts';
import { balanceModule } from './balance/balance.module.ts';
import { billingModule } from './billing/billing.module.ts';
import { clockModule } from './clock/clock.module.ts';
import { customerModule } from './customer/customer.module.ts';
import { emailModule } from './email/email.module.ts';
import { environmentModule } from './environment/environment.module.ts';
import { eventModule } from './event/event.module.ts';
import { invoiceModule } from './invoice/invoice.module.ts';
import { ledgerModule } from './ledger/ledger.module.ts';
import { meteringModule } from './metering/metering.module.ts';
import type { BillingModule } from './module.ts';
import { priceModule } from './price/price.module.ts';
import { productModule } from './product/product.module.ts';
import { sellerModule } from './seller/seller.module.ts';
import { subscriptionModule } from './subscription/subscription.module.ts';
import { taxModule } from './tax/tax-code.module.ts';
import { webhookModule } from './webhook/webhook.module.ts';

/** Every domain module of the service: a new module is one folder and one line here. */
export const modules: readonly BillingModule[] = [
  environmentModule,
  sellerModule,
  customerModule,
  taxModule,
  productModule,
  priceModule,
  ledgerModule,
  meteringModule,
  invoiceModule,
  balanceModule,
  subscriptionModule,
  billingModule,
  clockModule,
  auditModule,
  eventModule,
  emailModule,
  webhookModule,
];

/** Every table the ORM maps: environments and tokens (authentication's), then each module's. */
export const entities = [EnvironmentSchema, ApiTokenSchema, ...modules.flatMap((module) => module.entities)];

/** Every documented REST operation. */
export const routes: Route[] = modules.flatMap((module) => module.routes);

/** Every module's event listeners: what `event-published` hands each event to. */
export const eventListeners = modules.flatMap((module) => module.eventListeners ?? []);

/** Every background task of the job queue: each module's, and the purge of expired idempotency keys. */
export function jobTasks(base: Omit<JobDependencies, 'eventListeners'>): TaskList {
  const dependencies: JobDependencies = { ...base, eventListeners };
  return Object.assign(
    {},
    ...modules.map((module) => module.tasks?.(dependencies) ?? {}),
    idempotencyTasks(dependencies),
  );
}
