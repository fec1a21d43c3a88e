import { v7 } from 'uuid';

/** Time-ordered UUIDs (v7): primary keys double as stable keyset-pagination order. */
export const newId = (): string => v7();
