import { deliveriesQuery } from '../../../services/webhooks.ts';
import { idParams, page, webhookDeliverySchema } from './responses.ts';
import { routeUsing } from './route.ts';

const route = routeUsing('webhooks');

const tag = 'Webhooks';

export const webhookRoutes = [
  route({
    method: 'GET',
    path: '/webhooks/deliveries',
    operationId: 'listWebhookDeliveries',
    tag,
    summary: "This key's webhook attempts, newest first",
    description: 'Every attempt: the event, its generation, when, where, what the receiver answered (or why nothing came), how long it took, and the exact body sent.',
    query: deliveriesQuery,
    responses: { 200: { description: 'A page of attempts', schema: page(webhookDeliverySchema) } },
    errors: ['validation_error'],
    handler: (s, req) => s.webhooks.list(req.principal, req.query),
  }),
  route({
    method: 'POST',
    path: '/webhooks/deliveries/:id/redeliver',
    operationId: 'redeliverWebhook',
    tag,
    summary: 'Send a recorded attempt again',
    description: "One new attempt with the same body and event id (a new timestamp and signature) to the key's webhook URL as it is now; answers that attempt.",
    params: idParams,
    responses: { 201: { description: 'The new attempt, with what the receiver said', schema: webhookDeliverySchema } },
    errors: ['validation_error', 'not_found', 'conflict'],
    handler: async (s, req, reply) => reply.status(201).send(await s.webhooks.redeliver(req.principal, req.params.id)),
  }),
  route({
    method: 'POST',
    path: '/webhooks/test',
    operationId: 'sendTestWebhook',
    tag,
    summary: "Send a signed test event to this key's webhook URL",
    description: 'The body is `{event: "webhook.test", event_id, sent_at, message}`, signed and sent as every webhook is; answers the attempt.',
    responses: { 201: { description: 'The attempt, with what the receiver said', schema: webhookDeliverySchema } },
    errors: ['validation_error', 'conflict'],
    handler: async (s, req, reply) => reply.status(201).send(await s.webhooks.sendTest(req.principal)),
  }),
];
