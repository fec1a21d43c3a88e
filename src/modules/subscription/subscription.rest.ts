import { z } from 'zod';
import { listRoute } from '../../rest/list.ts';
import type { Route } from '../../rest/router.ts';
import { type SubscriptionDocument, SubscriptionService } from './subscription.service.ts';

const Reference = z.object({ id: z.uuid(), name: z.string() });

/** Contract 2.10: the items listed are those with a bill to come (`billAt`), ended and removed ones are not. */
export const SubscriptionResponse = z
  .object({
    id: z.uuid(),
    handle: z.string().nullable(),
    currency: z.string(),
    term: z.object({
      start: z.iso.date(),
      end: z.iso.date().nullable().meta({ description: 'null: open-ended' }),
    }),
    autoRenewal: z.boolean(),
    items: z
      .array(
        z.object({
          id: z.uuid(),
          billAt: z.iso.datetime().meta({ description: 'When the next bill of the item is due' }),
          period: z
            .object({ start: z.iso.date(), end: z.iso.date() })
            .meta({ description: 'The period that bill covers; end is the day the next period starts' }),
          quantity: z.number(),
          product: Reference,
          price: Reference,
        }),
      )
      .nullable(),
    createdAt: z.iso.datetime(),
  })
  .meta({ id: 'Subscription' });

export const subscriptionResponse = ({
  subscription,
  items,
}: SubscriptionDocument): z.infer<typeof SubscriptionResponse> => ({
  id: subscription.id,
  handle: subscription.handle ?? null,
  currency: subscription.currency,
  term: { start: subscription.termStart, end: subscription.termEnd ?? null },
  autoRenewal: subscription.autoRenewal,
  items: items.map(({ item, billAt, period, quantity, product, price }) => ({
    id: item.id,
    billAt: billAt.toISOString(),
    period,
    quantity: Number(quantity),
    product: { id: product.id, name: product.name },
    price: { id: price.id, name: price.name },
  })),
  createdAt: subscription.createdAt.toISOString(),
});

export const subscriptionRoutes: Route[] = [
  {
    method: 'GET',
    path: '/subscriptions/{subscriptionId}',
    summary: 'Read a subscription',
    response: { status: 200, description: 'The subscription', schema: SubscriptionResponse },
    handler: async ({ ctx, params }) => ({
      status: 200,
      body: subscriptionResponse(await new SubscriptionService(ctx).read(params.subscriptionId as string)),
    }),
  },
  listRoute({
    path: '/subscriptions',
    what: 'subscriptions',
    item: SubscriptionResponse,
    list: (ctx, page) => new SubscriptionService(ctx).list({}, page),
    respond: (ctx, subscriptions) => {
      const service = new SubscriptionService(ctx);
      return Promise.all(subscriptions.map(async ({ id }) => subscriptionResponse(await service.read(id))));
    },
  }),
];
