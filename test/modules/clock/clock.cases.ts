import { BILLING_AS_OF } from '../../security/fixtures.ts';
import { byId, type ModuleCases, page } from '../../support/cases.ts';

/** The clock module's operations in the isolation matrix (its environments are test environments). */
export const cases: ModuleCases = {
  isolation: {
    graphql: {
      'Query.testClock': [byId('testClock')],
      'Query.testClocks': [{ args: page }],
      'Mutation.testClockCreate': [
        { args: () => ({ input: { name: 'Isolation clock', frozenTime: BILLING_AS_OF } }) },
      ],
      'Mutation.testClockAdvance': [
        { target: 'testClock', args: (id) => ({ id, to: '2026-01-20T00:00:00.000Z' }) },
      ],
      'Mutation.testClockDelete': [byId('testClock')],
      // A customer attached to a clock: another environment's clock is refused like a missing one.
      'Mutation.customerCreate': [
        {
          target: 'testClock',
          args: (id) => ({ input: { name: 'Clocked', currency: 'EUR', testClockId: id } }),
        },
      ],
    },
  },
};
