import { pollUpstreamJob } from '../src/jobs/poll-upstream.ts';
import { defineTask } from './define.ts';

/** One look at a job waiting upstream (the look queues the next one itself). */
export const pollUpstreamTask = defineTask(pollUpstreamJob, (ctx, { upstream_job_id, slot, hook }) =>
  ctx.upstream.poll(upstream_job_id, { line: hook ? 'hook' : slot ? 'slot' : 'take' }),
);
