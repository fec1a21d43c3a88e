import { ApiTokenSchema } from '../auth/api-token.entity.ts';
import { EnvironmentSchema } from '../auth/environment.entity.ts';
import { CustomerSchema } from '../modules/customer/customer.entity.ts';

export const entities = [EnvironmentSchema, ApiTokenSchema, CustomerSchema];
