import { Migration20261121000000Foundation } from './Migration20261121000000Foundation.ts';
import { Migration20261121000100TaxCodesProducts } from './Migration20261121000100TaxCodesProducts.ts';
import { Migration20261121000900Reliability } from './Migration20261121000900Reliability.ts';

/** Every migration, in order. Committed migrations are never edited after release. */
export const migrations = [
  { name: 'Migration20261121000000Foundation', class: Migration20261121000000Foundation },
  { name: 'Migration20261121000100TaxCodesProducts', class: Migration20261121000100TaxCodesProducts },
  { name: 'Migration20261121000900Reliability', class: Migration20261121000900Reliability },
];
