import type { EntityManager } from '@mikro-orm/postgresql';
import DataLoader from 'dataloader';
import { type Customer, CustomerSchema } from './modules/customer/customer.entity.ts';

/** Per-request batch loaders, always scoped to the request's environment. */
export class Loaders {
  readonly customerById: DataLoader<string, Customer | null>;

  constructor(em: EntityManager, environmentId: string) {
    this.customerById = new DataLoader(async (ids) => {
      const rows = await em.find(CustomerSchema, { environmentId, id: { $in: [...ids] } });
      const byId = new Map(rows.map((row) => [row.id, row]));
      return ids.map((id) => byId.get(id) ?? null);
    });
  }
}
