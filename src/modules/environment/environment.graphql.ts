import { ENVIRONMENT_KINDS, type Environment, TAX_ROUNDINGS } from '../../auth/environment.entity.ts';
import { builder } from '../../graphql/builder.ts';
import { describedValues } from '../../graphql/enum-values.ts';
import { payloadType, withUserErrors } from '../../graphql/user-errors.ts';
import { EnvironmentService, EnvironmentUpdateInput } from './environment.service.ts';

const EnvironmentKindEnum = builder.enumType('EnvironmentKind', {
  values: describedValues(ENVIRONMENT_KINDS, {
    live: 'Real customers and money: nothing is billed ahead of the real clock.',
    test: 'For trying things out: may bill any moment and own test clocks.',
  }),
  description:
    'live: bills the present only; test: may bill any moment (simulated time). Chosen when the ' +
    'environment is created (CLI `env create --test`).',
});

export const TaxRoundingEnum = builder.enumType('TaxRounding', {
  values: describedValues(TAX_ROUNDINGS, {
    document: 'VAT rounded once per rate group of an invoice and allocated to its lines (EN 16931 BR-CO-17).',
    line: 'Each line’s VAT rounded by itself; the invoice’s VAT is their sum.',
  }),
  description:
    'document: VAT rounded once per rate group of an invoice and allocated to its lines (EN 16931 ' +
    'BR-CO-17); line: each line’s VAT rounded by itself. See docs/tax.md.',
});

const EnvironmentRef = builder.objectRef<Environment>('Environment').implement({
  description: 'The tenant a request acts in: every object belongs to exactly one.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID', description: 'Its id, a UUID.' }),
    name: t.exposeString('name', { description: 'The name given at creation (CLI `env create`).' }),
    kind: t.expose('kind', { type: EnvironmentKindEnum, description: 'live or test, fixed at creation.' }),
    taxRounding: t.expose('taxRounding', {
      type: TaxRoundingEnum,
      description: 'How drafts compute VAT; booked invoices keep the rounding they were booked with.',
    }),
    timezone: t.exposeString('timezone', {
      description:
        'IANA time zone new customers get when they name none (CLI `env create --timezone`; default UTC).',
    }),
    createdAt: t.expose('createdAt', {
      type: 'DateTime',
      description: 'When it was created (ISO 8601, UTC).',
    }),
  }),
});

const EnvironmentUpdateInputRef = builder
  .inputType('EnvironmentUpdateInput', {
    description: 'Settings left out stay as they are.',
    fields: (t) => ({
      taxRounding: t.field({
        type: TaxRoundingEnum,
        description: 'How drafts compute VAT from now on; left out: unchanged.',
      }),
    }),
  })
  .validate(EnvironmentUpdateInput);

const EnvironmentUpdatePayload = payloadType('EnvironmentUpdatePayload', 'environment', EnvironmentRef);

builder.queryFields((t) => ({
  environment: t.field({
    type: EnvironmentRef,
    description: 'The environment this request acts in (its `x-environment` header).',
    resolve: (_root, _args, ctx) => new EnvironmentService(ctx).get(),
  }),
}));

builder.mutationFields((t) => ({
  environmentUpdate: t.field({
    type: EnvironmentUpdatePayload,
    description: 'Changes the settings of the environment this request acts in.',
    args: {
      input: t.arg({
        type: EnvironmentUpdateInputRef,
        required: true,
        description: 'The values to write (see the input type).',
      }),
    },
    resolve: (_root, { input }, ctx) =>
      withUserErrors('environment', () => new EnvironmentService(ctx).update(input)),
  }),
}));
