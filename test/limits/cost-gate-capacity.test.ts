import { parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { DEFAULT_INFLIGHT_COST, MAX_QUERY_COST } from '../../src/config.ts';
import { schema } from '../../src/graphql/schema.ts';
import { CostGate } from '../../src/limits/cost-gate.ts';
import { priceQuery } from '../../src/limits/query-cost.ts';

/** An invoice page as a list screen asks for it: customer, lines and settlements of each invoice. */
const page = (alias: string, first: number) => `${alias}: invoices(first: ${first}) {
  edges { node {
    id handle status settlementStatus currency date totalInclVat totalDue
    customerId customer { name billingAddress { city country } }
    items { id title quantity unitAmount amount taxAmount tax { taxRate } }
    settlements { date amount reference }
  } }
  pageInfo { hasNextPage endCursor }
}`;

const price = (query: string) =>
  priceQuery({ schema, document: parse(query), variableValues: {}, context: {} as never }, MAX_QUERY_COST)
    .cost;

/** A page of 50 invoices with their lines, and the heaviest document the limits admit (bench/run.ts). */
const PAGE_OF_50 = price(`{ ${page('invoices', 50)} }`);
const HEAVIEST = price(`{ ${[0, 1, 2].map((i) => page(`a${i}`, 18)).join(' ')} }`);

describe('the cost gate’s default capacity (GRAPHQL_INFLIGHT_COST)', () => {
  it('lets two pages of 50 invoices with their lines run side by side', async () => {
    const gate = new CostGate(DEFAULT_INFLIGHT_COST);
    const endsAt = Date.now() + 1000;
    const first = await gate.enter(PAGE_OF_50, endsAt);
    const second = await gate.enter(PAGE_OF_50, endsAt);
    expect(first).not.toBeNull();
    expect(second).not.toBeNull();
    expect(gate.costInFlight).toBe(2 * PAGE_OF_50);
    first?.();
    second?.();
  });

  it('runs the heaviest documents the limits admit one at a time', async () => {
    expect(HEAVIEST).toBeGreaterThan(PAGE_OF_50);
    const gate = new CostGate(DEFAULT_INFLIGHT_COST);
    const release = await gate.enter(HEAVIEST, Date.now() + 1000);
    expect(release).not.toBeNull();
    let admitted = false;
    const next = gate.enter(HEAVIEST, Date.now() + 1000).then((second) => {
      admitted = true;
      return second;
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(admitted).toBe(false);
    expect(gate.waiting).toBe(1);
    release?.();
    const second = await next;
    expect(second).not.toBeNull();
    expect(gate.costInFlight).toBe(HEAVIEST);
    second?.();
    expect(gate.costInFlight).toBe(0);
  });

  it('starts a collection when the heaviest document gives its admission back, not after a page of 50', async () => {
    // given a gate that counts the collections it asks for
    let collections = 0;
    const gate = new CostGate(DEFAULT_INFLIGHT_COST, () => collections++);
    const endsAt = Date.now() + 1000;

    // when two pages of 50 run and end, and then the heaviest document
    const pages = [await gate.enter(PAGE_OF_50, endsAt), await gate.enter(PAGE_OF_50, endsAt)];
    for (const release of pages) release?.();
    const afterPages = collections;
    const heaviest = await gate.enter(HEAVIEST, endsAt);
    const whileRunning = collections;
    heaviest?.();
    heaviest?.();

    // then only the heaviest document's end asks for one, once
    expect([afterPages, whileRunning, collections]).toEqual([0, 0, 1]);
  });
});
