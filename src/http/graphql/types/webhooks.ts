import { builder } from '../builder.ts';
import { principalOf, servicesFor } from '../request-context.ts';
import { errorTypes } from './errors.ts';
import { WebhookDeliveryRef } from './generation.ts';
import { pageArgs, pageOf, pageQuery } from './page-type.ts';

const services = servicesFor('webhooks');

export const WebhookDeliveryPageRef = pageOf('WebhookDeliveryPage', WebhookDeliveryRef);

builder.queryFields((t) => ({
  webhookDeliveries: t.field({
    type: WebhookDeliveryPageRef,
    errors: errorTypes,
    description: "The calling key's webhook attempts, newest first (the same as GET /webhooks/deliveries)",
    args: { ...pageArgs(t), generation_id: t.arg.id(), outcome: t.arg.string({ description: 'succeeded or failed' }) },
    resolve: (_r, args, ctx) =>
      services(ctx).webhooks.list(principalOf(ctx), {
        ...pageQuery(args),
        ...(args.generation_id != null ? { generation_id: String(args.generation_id) } : {}),
        ...(args.outcome != null ? { outcome: args.outcome } : {}),
      }),
  }),
}));

builder.mutationFields((t) => ({
  redeliverWebhook: t.field({
    type: WebhookDeliveryRef,
    errors: errorTypes,
    description: 'A recorded attempt sent again: same body and event id, new timestamp and signature',
    args: { id: t.arg.id({ required: true }) },
    resolve: (_r, { id }, ctx) => services(ctx).webhooks.redeliver(principalOf(ctx), String(id)),
  }),
  sendTestWebhook: t.field({
    type: WebhookDeliveryRef,
    errors: errorTypes,
    description: "A signed webhook.test event to the calling key's webhook URL",
    resolve: (_r, _a, ctx) => services(ctx).webhooks.sendTest(principalOf(ctx)),
  }),
}));
