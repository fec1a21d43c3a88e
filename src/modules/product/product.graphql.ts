import { z } from 'zod';
import { builder } from '../../graphql/builder.ts';
import { NodeRef, nodeType } from '../../graphql/node.ts';
import { orderInput } from '../../graphql/ordering.ts';
import { payloadType, withUserErrors } from '../../graphql/user-errors.ts';
import type { Product } from './product.entity.ts';
import { ProductCreateInput, ProductUpdateInput } from './product.input.ts';
import { productLoaders } from './product.reads.ts';
import { ProductService } from './product.service.ts';

export const ProductRef = builder.objectRef<Product>('Product').implement({
  description: 'Something sold, with prices (see Price).',
  interfaces: [NodeRef],
  fields: (t) => ({
    id: t.exposeID('id', { description: 'A UUID; the same id in REST.' }),
    name: t.exposeString('name', { description: 'The product’s name, as printed on invoice lines.' }),
    handle: t.exposeString('handle', {
      nullable: true,
      description:
        'Handle or SKU, unique within the environment. Invoice items with this sku take their defaults from the product.',
    }),
    description: t.exposeString('description', {
      nullable: true,
      description: 'Text about the product; null when none.',
    }),
    taxCode: t.exposeString('taxCode', {
      nullable: true,
      description: 'Code of a tax code of the environment.',
    }),
    metadata: t.expose('metadata', {
      type: 'JSONObject',
      description: 'Keys the operator keeps on the product (REST PATCH keys that are no product field).',
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

const METADATA_DESCRIPTION =
  'Metadata keys to set (any JSON value) or remove (null); at most 50 keys, key 1-40 characters, value at most 500 characters as JSON.';

const ProductCreateInputRef = builder
  .inputType('ProductCreateInput', {
    description: 'A new product.',
    fields: (t) => ({
      name: t.string({ required: true, description: 'The product’s name (1 to 250 characters).' }),
      handle: t.string({
        description: 'A unique handle within the environment, for lookups; none when left out.',
      }),
      description: t.string({ description: 'Text about the product.' }),
      taxCode: t.string({ description: 'Code of a tax code of the environment.' }),
      metadata: t.field({ type: 'JSONObject', description: METADATA_DESCRIPTION }),
    }),
  })
  .validate(ProductCreateInput);

const ProductUpdateInputRef = builder
  .inputType('ProductUpdateInput', {
    description: 'Fields left out stay as they are; fields set to null are cleared (name cannot be).',
    fields: (t) => ({
      name: t.string({ description: 'A new name.' }),
      handle: t.string({ description: 'A new handle; null clears it.' }),
      description: t.string({ description: 'New text; null clears it.' }),
      taxCode: t.string({ description: 'A new tax code; null clears it.' }),
      metadata: t.field({ type: 'JSONObject', description: METADATA_DESCRIPTION }),
    }),
  })
  .validate(ProductUpdateInput);

const ProductFilterRef = builder.inputType('ProductFilter', {
  description: 'Narrows a list of products; every condition given must hold.',
  fields: (t) => ({
    search: t.string({
      description: 'Part of the name or handle, in any case.',
      validate: z.string().max(250),
    }),
    taxCode: t.string({ description: 'Only products taxed under this tax code.' }),
  }),
});

const ProductOrder = orderInput<Product>('Product', 'products', {
  created_at: { field: 'id', description: 'Creation time (the default).' },
  name: { field: 'name', description: 'Name, in the database collation.' },
});

const ProductCreatePayload = payloadType('ProductCreatePayload', 'product', ProductRef);
const ProductUpdatePayload = payloadType('ProductUpdatePayload', 'product', ProductRef);

builder.queryFields((t) => ({
  product: t.field({
    description: 'The product with this id; null when this environment has none.',
    type: ProductRef,
    nullable: true,
    args: { id: t.arg({ type: 'UUID', required: true, description: 'The id of the object meant.' }) },
    resolve: (_root, { id }, ctx) => ctx.loaders.of(productLoaders).byId.load(id),
  }),
  productByHandle: t.field({
    type: ProductRef,
    nullable: true,
    description: "The environment's product with this handle (SKU); null when there is none.",
    args: { handle: t.arg.string({ required: true, description: 'The handle, as stored.' }) },
    resolve: (_root, { handle }, ctx) => new ProductService(ctx).findByHandle(handle),
  }),
  products: t.connection(
    {
      type: ProductRef,
      description: "The environment's products, in creation order unless `orderBy` says otherwise.",
      args: {
        filter: t.arg({
          type: ProductFilterRef,
          description: 'Only items matching every field given; all when left out.',
        }),
        orderBy: t.arg({
          type: ProductOrder.ref,
          description: 'The sort order; creation order when left out.',
        }),
      },
      resolve: (_root, { filter, orderBy, ...page }, ctx) =>
        new ProductService(ctx).list(page, filter ?? {}, ProductOrder.toSort(orderBy)),
    },
    { name: 'ProductConnection' },
    { name: 'ProductEdge' },
  ),
}));

builder.mutationFields((t) => ({
  productCreate: t.field({
    description: 'Creates a product.',
    type: ProductCreatePayload,
    args: {
      input: t.arg({
        type: ProductCreateInputRef,
        required: true,
        description: 'The values to write (see the input type).',
      }),
    },
    resolve: (_root, { input }, ctx) =>
      withUserErrors('product', () => new ProductService(ctx).create(input)),
  }),
  productUpdate: t.field({
    description: 'Changes a product.',
    type: ProductUpdatePayload,
    args: {
      id: t.arg({ type: 'UUID', required: true, description: 'The id of the object meant.' }),
      input: t.arg({
        type: ProductUpdateInputRef,
        required: true,
        description: 'The values to write (see the input type).',
      }),
    },
    resolve: (_root, { id, input }, ctx) =>
      withUserErrors('product', () => new ProductService(ctx).update(id, input)),
  }),
}));

nodeType('Product', (ctx, id) => ctx.loaders.of(productLoaders).byId.load(id));
