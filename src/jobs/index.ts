import type { TaskList } from 'graphile-worker';
import { isDatabaseUnavailable } from '../domain/database-unavailable.ts';
import { contextOf, inSpan, SpanKind } from '../observability/tracing.ts';
import type { JobContext } from './context.ts';
import { PRIORITY, type CronDefinition, type JobDefinition } from './define.ts';
import { deleteStoredFilesJob } from './delete-stored-files.ts';
import { deliverWebhookJob } from './deliver-webhook.ts';
import { expireUploadsCron } from './expire-uploads.ts';
import { exportTeamJob } from './export-team.ts';
import { expireStoredFilesCron, pruneSignInStateCron, purgeAuditLogCron, purgeIdempotencyKeysCron, purgeRateLimitHitsCron, sweepGenerationsCron } from './maintenance.ts';
import { runCampaignJob } from './run-campaign.ts';
import { pollUpstreamJob } from './poll-upstream.ts';
import { runGenerationJob } from './run-generation.ts';
import { scrapeAdLibraryJob } from './scrape-ad-library.ts';

export const JOBS: readonly JobDefinition[] = [runGenerationJob, pollUpstreamJob, deliverWebhookJob, runCampaignJob, scrapeAdLibraryJob, deleteStoredFilesJob, exportTeamJob];
export const CRONS: readonly CronDefinition[] = [sweepGenerationsCron, purgeIdempotencyKeysCron, purgeRateLimitHitsCron, pruneSignInStateCron, purgeAuditLogCron, expireStoredFilesCron, expireUploadsCron];

/**
 * graphile-worker's crontab, from the cron definitions. Workers take jobs by priority, then by
 * when they were due: at the default priority a cron's job waits behind every job queued before
 * it, so under a backlog the deadline sweeper ran minutes late (the chaos soak saw generations
 * processing well past their deadline). Maintenance is short and goes first.
 */
export const crontab = (): string => CRONS.map((c) => `${c.schedule} ${c.name} ?priority=${PRIORITY.maintenance}`).join('\n');

/**
 * graphile-worker's task list: each task checks its payload against its definition and runs its handler.
 * A handler stopped by the worker's shutdown (its abort signal) gives its attempt back before it is
 * released; so does one that failed on a database outage, once the database answers again.
 */
export function taskList(ctx: JobContext, jobs: readonly JobDefinition[] = JOBS, crons: readonly CronDefinition[] = CRONS): TaskList {
  const list: TaskList = {};
  for (const job of jobs) {
    list[job.name] = async (raw, helpers) => {
      const payload = (raw ?? {}) as { traceparent?: unknown; generation_id?: unknown };
      const attributes = { 'adforge.job': job.name, 'adforge.job_id': helpers.job.id, 'adforge.attempt': helpers.job.attempts, ...(typeof payload.generation_id === 'string' ? { 'adforge.generation_id': payload.generation_id } : {}) };
      await inSpan(`job ${job.name}`, attributes, async () => {
        try {
          await job.handler(ctx, job.payload.parse(raw), helpers);
        } catch (e) {
          if (helpers.abortSignal?.aborted) await ctx.workerLiveness.releasedByShutdown(helpers.job.id);
          // A job of one attempt is never run again, by its definition (a webhook delivery).
          else if (isDatabaseUnavailable(e) && helpers.job.max_attempts > 1) await ctx.workerLiveness.afterOutage(helpers.job.id, helpers.abortSignal);
          throw e;
        }
      }, { kind: SpanKind.CONSUMER, parent: contextOf(payload.traceparent) });
    };
  }
  for (const cron of crons) list[cron.name] = async (_raw, helpers) => cron.handler(ctx, helpers);
  return list;
}
