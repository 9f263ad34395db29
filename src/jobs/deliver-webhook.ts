import { z } from 'zod';
import { defineJob, PRIORITY } from './define.ts';

/** One attempt, by the spec: a failed delivery is recorded, never retried. */
export const deliverWebhookJob = defineJob({
  name: 'deliver_webhook',
  payload: z.object({ generation_id: z.uuid() }),
  options: { maxAttempts: 1, priority: PRIORITY.finishing },
});
