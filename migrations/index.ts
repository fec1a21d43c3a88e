import { Migration20261121000000Foundation } from './Migration20261121000000Foundation.ts';

/** Every migration, in order. Committed migrations are never edited after release. */
export const migrations = [
  { name: 'Migration20261121000000Foundation', class: Migration20261121000000Foundation },
];
