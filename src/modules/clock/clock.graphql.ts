import { Instant } from '../../dates/calendar.ts';
import { builder } from '../../graphql/builder.ts';
import { describedValues } from '../../graphql/enum-values.ts';
import { payloadType, type UserError, UserErrorRef, withUserErrors } from '../../graphql/user-errors.ts';
import { TEST_CLOCK_STATUSES, type TestClock } from './clock.entity.ts';
import { TestClockCreateInput, TestClockService } from './clock.service.ts';

const TestClockStatusEnum = builder.enumType('TestClockStatus', {
  values: describedValues(TEST_CLOCK_STATUSES, {
    ready: 'At its frozen time; it may be advanced.',
    advancing:
      'A job is billing its customers up to advancingTo; another advance is refused until it is ready.',
  }),
  description:
    'ready: at its frozen time; advancing: a job is billing its customers up to `advancingTo` (events ' +
    'test_clock.advancing, then test_clock.ready).',
});

const TestClockRef = builder.objectRef<TestClock>('TestClock').implement({
  description:
    'Simulated time of a test environment: the customers attached to it live on its frozen time, and ' +
    'only its advances bill them.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID', description: 'Its id, a UUID.' }),
    name: t.exposeString('name', { description: 'A name for the operator, e.g. the scenario it plays.' }),
    frozenTime: t.expose('frozenTime', { type: 'DateTime', description: '"Now" for its customers.' }),
    status: t.expose('status', {
      type: TestClockStatusEnum,
      description: 'Whether an advance is under way.',
    }),
    advancingTo: t.expose('advancingTo', {
      type: 'DateTime',
      nullable: true,
      description: 'Where the advance under way goes; null when ready.',
    }),
    createdAt: t.expose('createdAt', {
      type: 'DateTime',
      description: 'When it was created (ISO 8601, UTC).',
    }),
    updatedAt: t.expose('updatedAt', {
      type: 'DateTime',
      nullable: true,
      description: 'When it last changed (ISO 8601, UTC); null if it never changed.',
    }),
  }),
});

const TestClockCreateInputRef = builder
  .inputType('TestClockCreateInput', {
    description: 'A new test clock: its name and where its time starts.',
    fields: (t) => ({
      name: t.string({ required: true, description: '1 to 250 characters, for the operator.' }),
      frozenTime: t.field({ type: 'DateTime', required: true, description: 'Where the clock starts.' }),
    }),
  })
  .validate(TestClockCreateInput);

const TestClockCreatePayload = payloadType('TestClockCreatePayload', 'testClock', TestClockRef);
const TestClockAdvancePayload = payloadType('TestClockAdvancePayload', 'testClock', TestClockRef);
const TestClockDeletePayload = builder
  .objectRef<{ result: string | null; userErrors: UserError[] }>('TestClockDeletePayload')
  .implement({
    description: 'The outcome of testClockDelete.',
    fields: (t) => ({
      deletedTestClockId: t.field({
        type: 'UUID',
        nullable: true,
        description: 'The id of the deleted clock; null when nothing was deleted (see userErrors).',
        resolve: (payload) => payload.result,
      }),
      userErrors: t.field({
        type: [UserErrorRef],
        description: 'Why the mutation changed nothing; empty when it succeeded.',
        resolve: (payload) => payload.userErrors,
      }),
    }),
  });

builder.queryFields((t) => ({
  testClock: t.field({
    type: TestClockRef,
    nullable: true,
    description: 'A test clock of this environment by id; null when there is none.',
    args: { id: t.arg({ type: 'UUID', required: true, description: 'The id of the object meant.' }) },
    resolve: (_root, { id }, ctx) => new TestClockService(ctx).find(id),
  }),
  testClocks: t.connection(
    {
      type: TestClockRef,
      description: 'Test clocks of this environment, oldest first (a live environment has none).',
      resolve: (_root, page, ctx) => new TestClockService(ctx).list(page),
    },
    { name: 'TestClockConnection' },
    { name: 'TestClockEdge' },
  ),
}));

builder.mutationFields((t) => ({
  testClockCreate: t.field({
    type: TestClockCreatePayload,
    description:
      'Creates a test clock at `frozenTime`. Test environments only: TEST_CLOCK_LIVE_ENVIRONMENT in a live one.',
    args: {
      input: t.arg({
        type: TestClockCreateInputRef,
        required: true,
        description: 'The values to write (see the input type).',
      }),
    },
    resolve: (_root, { input }, ctx) =>
      withUserErrors('testClock', () => new TestClockService(ctx).create(input)),
  }),
  testClockAdvance: t.field({
    type: TestClockAdvancePayload,
    description:
      'Moves the clock forward to `to`: it answers the clock `advancing`, and a job bills everything due up ' +
      "to `to` for the clock's customers only (renewals, ends, proration, usage periods, overdue checks), then " +
      'makes it `ready` at `to` (events test_clock.advancing and test_clock.ready). Refused: ' +
      'TEST_CLOCK_ADVANCING while an advance is under way, TEST_CLOCK_BACKWARDS before the frozen time, ' +
      'TEST_CLOCK_TOO_FAR beyond two periods of the shortest recurring term of its customers (two years ' +
      'when they have none).',
    args: {
      id: t.arg({ type: 'UUID', required: true, description: 'The id of the object meant.' }),
      to: t
        .arg({
          type: 'DateTime',
          required: true,
          description: 'The time to move the clock to (ISO 8601); not before its frozen time.',
        })
        .validate(Instant),
    },
    resolve: (_root, { id, to }, ctx) =>
      withUserErrors('testClock', () => new TestClockService(ctx).advance(id, to)),
  }),
  testClockDelete: t.field({
    type: TestClockDeletePayload,
    description:
      'Deletes a clock no customer is attached to (customers stay on their clock: CONFLICT); ' +
      'TEST_CLOCK_ADVANCING while it advances.',
    args: { id: t.arg({ type: 'UUID', required: true, description: 'The id of the object meant.' }) },
    resolve: (_root, { id }, ctx) => withUserErrors('result', () => new TestClockService(ctx).delete(id)),
  }),
}));
