import { deliverWebhookJob } from '../src/jobs/deliver-webhook.ts';
import { defineTask } from './define.ts';

/** A generation's webhook, delivered once. */
export const deliverWebhookTask = defineTask(deliverWebhookJob, (ctx, { generation_id }) => ctx.webhooks.deliverFor(generation_id));
