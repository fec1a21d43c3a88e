import { ApiTokenSchema } from '../auth/api-token.entity.ts';
import { EnvironmentSchema } from '../auth/environment.entity.ts';
import { AuditEventSchema } from '../modules/audit/audit-event.entity.ts';
import { CustomerSchema } from '../modules/customer/customer.entity.ts';
import { ProductSchema } from '../modules/product/product.entity.ts';
import { TaxCodeSchema } from '../modules/tax/tax-code.entity.ts';

export const entities = [
  EnvironmentSchema,
  ApiTokenSchema,
  CustomerSchema,
  TaxCodeSchema,
  ProductSchema,
  AuditEventSchema,
];
