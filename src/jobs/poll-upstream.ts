import { z } from 'zod';
import { defineJob, PRIORITY } from './define.ts';

/**
 * One look at a job waiting upstream; the handler queues the next look itself (run_at), so a
 * minutes-long provider job holds no worker slot. Keyed per attempt: a hint to poll now (an
 * inbound provider webhook) replaces the waiting look instead of adding another. When it runs is
 * set by the job's age and its provider's shared poll budget (services/generations/poll-budget.ts).
 */
export const pollUpstreamJob = defineJob({
  name: 'poll_upstream',
  // slot: this look was queued for a read slot of its provider's budget it already took.
  // hook: the provider called back: the look reads at the next gap, ahead of the slots' line.
  payload: z.object({ upstream_job_id: z.uuid(), slot: z.literal(true).optional(), hook: z.literal(true).optional() }),
  options: { maxAttempts: 10, jobKey: (p) => `upstream:${p.upstream_job_id}`, priority: PRIORITY.finishing },
});
