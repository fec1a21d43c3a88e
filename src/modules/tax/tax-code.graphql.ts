import { z } from 'zod';
import { builder } from '../../graphql/builder.ts';
import { orderInput } from '../../graphql/ordering.ts';
import { payloadType, withUserErrors } from '../../graphql/user-errors.ts';
import type { TaxCode } from './tax-code.entity.ts';
import { TaxCodeCreateInput, TaxCodeUpdateInput } from './tax-code.input.ts';
import { TaxCodeService } from './tax-code.service.ts';

export const TaxCodeRef = builder.objectRef<TaxCode>('TaxCode').implement({
  description: 'A tax code of the environment; products and invoice items name it by code.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID', description: 'Its id, a UUID.' }),
    code: t.exposeString('code', { description: 'Unique within the environment; fixed at creation.' }),
    rate: t.float({
      description: 'Percentage: 25 means 25 %. At most 4 decimals.',
      resolve: (taxCode) => Number(taxCode.rate),
    }),
    description: t.exposeString('description', {
      nullable: true,
      description: 'Free text for the operator, e.g. the legal basis of the rate; null when none.',
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

const TaxCodeCreateInputRef = builder
  .inputType('TaxCodeCreateInput', {
    description: 'A new tax code: its code, rate and an optional description.',
    fields: (t) => ({
      code: t.string({ required: true, description: '1 to 64 characters, unique within the environment.' }),
      rate: t.float({ required: true, description: 'Percentage from 0 to 100, at most 4 decimals.' }),
      description: t.string({ description: 'Free text for the operator; left out: none.' }),
    }),
  })
  .validate(TaxCodeCreateInput);

const TaxCodeUpdateInputRef = builder
  .inputType('TaxCodeUpdateInput', {
    description:
      'Fields left out stay as they are; a null description is cleared. The code cannot change. ' +
      'Invoice items keep the rate they were created with.',
    fields: (t) => ({
      rate: t.float({
        description: 'The new percentage from 0 to 100, at most 4 decimals; drafts use it from now on.',
      }),
      description: t.string({ description: 'The new free text; null clears it.' }),
    }),
  })
  .validate(TaxCodeUpdateInput);

const TaxCodeCreatePayload = payloadType('TaxCodeCreatePayload', 'taxCode', TaxCodeRef);
const TaxCodeUpdatePayload = payloadType('TaxCodeUpdatePayload', 'taxCode', TaxCodeRef);

const TaxCodeFilterRef = builder.inputType('TaxCodeFilter', {
  description: 'Narrows a list of tax codes.',
  fields: (t) => ({
    search: t.string({
      description: 'Part of the code or description, in any case.',
      validate: z.string().max(500),
    }),
  }),
});

const TaxCodeOrder = orderInput<TaxCode>('TaxCode', 'tax codes', {
  created_at: { field: 'id', description: 'Creation time (the default).' },
  code: { field: 'code', description: 'Code, in the database collation.' },
});

builder.queryFields((t) => ({
  taxCode: t.field({
    type: TaxCodeRef,
    nullable: true,
    description: 'The tax code with this code in this environment; null when there is none.',
    args: { code: t.arg.string({ required: true, description: 'The code, as products and items name it.' }) },
    resolve: (_root, { code }, ctx) => new TaxCodeService(ctx).findByCode(code),
  }),
  taxCodes: t.connection(
    {
      type: TaxCodeRef,
      description: "The environment's tax codes, in creation order unless `orderBy` says otherwise.",
      args: {
        filter: t.arg({
          type: TaxCodeFilterRef,
          description: 'Only items matching every field given; all when left out.',
        }),
        orderBy: t.arg({
          type: TaxCodeOrder.ref,
          description: 'The sort order; creation order when left out.',
        }),
      },
      resolve: (_root, { filter, orderBy, ...page }, ctx) =>
        new TaxCodeService(ctx).list(page, filter ?? {}, TaxCodeOrder.toSort(orderBy)),
    },
    { name: 'TaxCodeConnection' },
    { name: 'TaxCodeEdge' },
  ),
}));

builder.mutationFields((t) => ({
  taxCodeCreate: t.field({
    type: TaxCodeCreatePayload,
    description: 'Creates a tax code. DUPLICATE when the code exists in this environment.',
    args: {
      input: t.arg({
        type: TaxCodeCreateInputRef,
        required: true,
        description: 'The values to write (see the input type).',
      }),
    },
    resolve: (_root, { input }, ctx) =>
      withUserErrors('taxCode', () => new TaxCodeService(ctx).create(input)),
  }),
  taxCodeUpdate: t.field({
    type: TaxCodeUpdatePayload,
    description: 'Changes the rate or description of a tax code; booked invoices keep their rates.',
    args: {
      id: t.arg({ type: 'UUID', required: true, description: 'The id of the object meant.' }),
      input: t.arg({
        type: TaxCodeUpdateInputRef,
        required: true,
        description: 'The values to write (see the input type).',
      }),
    },
    resolve: (_root, { id, input }, ctx) =>
      withUserErrors('taxCode', () => new TaxCodeService(ctx).update(id, input)),
  }),
}));
