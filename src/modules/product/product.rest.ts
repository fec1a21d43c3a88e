import { z } from 'zod';
import { listRoute } from '../../rest/list.ts';
import type { Route } from '../../rest/router.ts';
import { parseInput, withoutReadOnly } from '../../validation.ts';
import type { Product } from './product.entity.ts';
import { PRODUCT_READ_ONLY_FIELDS, ProductPatchBody, productUpdateOf } from './product.input.ts';
import { ProductService } from './product.service.ts';

/** Contract 2.9. */
export const ProductResponse = z.strictObject({
  id: z.uuid(),
  name: z.string().nullable(),
  handle: z.string().nullable(),
  description: z.string().nullable(),
  taxCode: z.string().nullable(),
  createdAt: z.iso.datetime(),
  updatedAt: z.iso.datetime().nullable(),
});

export const productResponse = (product: Product): z.infer<typeof ProductResponse> => ({
  id: product.id,
  name: product.name,
  handle: product.handle ?? null,
  description: product.description ?? null,
  taxCode: product.taxCode ?? null,
  createdAt: product.createdAt.toISOString(),
  updatedAt: product.updatedAt?.toISOString() ?? null,
});

export const productRoutes: Route[] = [
  {
    method: 'PATCH',
    path: '/products/{productId}',
    summary:
      'Update a product: name, handle, description, taxCode (absent fields stay, null clears); other keys go to its metadata',
    body: ProductPatchBody,
    response: { status: 200, description: 'The updated product', schema: ProductResponse },
    handler: async ({ ctx, params, body }) => {
      const parsed = parseInput(ProductPatchBody, withoutReadOnly(body, PRODUCT_READ_ONLY_FIELDS));
      const input = productUpdateOf(parsed);
      const product = await new ProductService(ctx).update(params.productId as string, input);
      return { status: 200, body: productResponse(product) };
    },
  },
  listRoute({
    path: '/products',
    what: 'products',
    item: ProductResponse,
    list: (ctx, page) => new ProductService(ctx).list(page),
    respond: (_ctx, products) => products.map(productResponse),
  }),
];
