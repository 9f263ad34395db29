import type { Task } from 'graphile-worker';
import { z } from 'zod';
import type { WebhookService } from '../src/services/webhooks.ts';

const payload = z.object({ generation_id: z.uuid() });

/** One attempt (the job has max_attempts 1): a failed delivery is recorded, never retried. */
export const deliverWebhook =
  (webhooks: WebhookService): Task =>
  async (raw) => {
    const { generation_id } = payload.parse(raw);
    await webhooks.deliverFor(generation_id);
  };
