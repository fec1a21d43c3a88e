import { ApiTokenSchema } from '../auth/api-token.entity.ts';
import { EnvironmentSchema } from '../auth/environment.entity.ts';
import { CustomerSchema } from '../modules/customer/customer.entity.ts';
import {
  InvoiceItemSchema,
  InvoiceNumberingSchema,
  InvoiceSchema,
  SettlementSchema,
} from '../modules/invoice/invoice.entity.ts';
import { ProductSchema } from '../modules/product/product.entity.ts';
import { TaxCodeSchema } from '../modules/tax/tax-code.entity.ts';

export const entities = [
  EnvironmentSchema,
  ApiTokenSchema,
  CustomerSchema,
  TaxCodeSchema,
  ProductSchema,
  InvoiceSchema,
  InvoiceItemSchema,
  SettlementSchema,
  InvoiceNumberingSchema,
];
