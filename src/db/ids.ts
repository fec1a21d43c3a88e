import { randomFillSync } from 'node:crypto';
import { v7 } from 'uuid';

/**
 * Random bytes for ids, drawn 4 KiB at a time: uuid draws 16 bytes per id through a WebCrypto call,
 * which cost about 5 % of the CPU of creating an invoice (eight ids with its lines and audit events).
 */
const pool = new Uint8Array(4096);
let taken = pool.length;

function sixteenRandomBytes(): Uint8Array {
  if (taken + 16 > pool.length) {
    randomFillSync(pool);
    taken = 0;
  }
  taken += 16;
  return pool.subarray(taken - 16, taken);
}

/** The timestamp and counter of the last id: uuid's own v7 state, which it keeps only when it draws the bytes. */
let lastMsecs = Number.NEGATIVE_INFINITY;
let sequence = 0;

/**
 * Time-ordered UUIDs (v7): primary keys double as stable keyset-pagination order. Within a millisecond the
 * counter counts up (RFC 9562 method 1, as uuid does), so the ids of one process only ever increase.
 */
export function newId(): string {
  const random = sixteenRandomBytes();
  const now = Date.now();
  if (now > lastMsecs) {
    lastMsecs = now;
    sequence =
      (((random[6] as number) & 0x7f) << 24) |
      ((random[7] as number) << 16) |
      ((random[8] as number) << 8) |
      (random[9] as number);
  } else {
    sequence = (sequence + 1) | 0;
    if (sequence === 0) lastMsecs++;
  }
  return v7({ random, msecs: lastMsecs, seq: sequence });
}
