import { z } from 'zod';
import { listRoute } from '../../rest/list.ts';
import type { Route } from '../../rest/router.ts';
import { parseInput, withoutReadOnly } from '../../validation.ts';
import { PRICE_MODELS, type Price, PURCHASES, TERM_UNITS } from './price.entity.ts';
import { PRICE_READ_ONLY_FIELDS, PriceCreateInput, PriceUpdateInput } from './price.input.ts';
import { PriceService } from './price.service.ts';

/** Contract 2.8: no `method` field. */
export const PriceResponse = z.strictObject({
  id: z.uuid(),
  name: z.string().nullable(),
  description: z.string().nullable(),
  priceModel: z.enum(PRICE_MODELS),
  purchase: z.enum(PURCHASES),
  termCount: z.int(),
  termUnit: z.enum(TERM_UNITS),
  pricing: z.record(z.string(), z.unknown()),
});

export const priceResponse = (price: Price): z.infer<typeof PriceResponse> => ({
  id: price.id,
  name: price.name,
  description: price.description ?? null,
  priceModel: price.priceModel,
  purchase: price.purchase,
  termCount: price.termCount,
  termUnit: price.termUnit,
  pricing: price.pricing,
});

export const priceRoutes: Route[] = [
  {
    method: 'POST',
    path: '/prices',
    summary: 'Create a price',
    body: PriceCreateInput,
    response: { status: 201, description: 'Created; Location names the new price', schema: PriceResponse },
    handler: async ({ ctx, body }) => {
      const input = parseInput(PriceCreateInput, withoutReadOnly(body, PRICE_READ_ONLY_FIELDS));
      const price = await new PriceService(ctx).create(input);
      return { status: 201, body: priceResponse(price), headers: { location: `/prices/${price.id}` } };
    },
  },
  {
    // Beyond the contract: the address POST /prices names in Location answers.
    method: 'GET',
    path: '/prices/{priceId}',
    summary: 'Read a price',
    response: { status: 200, description: 'The price', schema: PriceResponse },
    handler: async ({ ctx, params }) => ({
      status: 200,
      body: priceResponse(await new PriceService(ctx).get(params.priceId as string)),
    }),
  },
  {
    method: 'PUT',
    path: '/prices/{priceId}',
    summary: 'Replace a price (purchase and method are fixed at creation)',
    body: PriceUpdateInput,
    response: { status: 200, description: 'The updated price', schema: PriceResponse },
    handler: async ({ ctx, params, body }) => {
      const input = parseInput(PriceUpdateInput, withoutReadOnly(body, PRICE_READ_ONLY_FIELDS));
      const price = await new PriceService(ctx).update(params.priceId as string, input);
      return { status: 200, body: priceResponse(price) };
    },
  },
  listRoute({
    path: '/prices',
    what: 'prices',
    item: PriceResponse,
    list: (ctx, page) => new PriceService(ctx).list(page),
    respond: (_ctx, prices) => prices.map(priceResponse),
  }),
];
