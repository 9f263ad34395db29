import type { TaskList } from 'graphile-worker';
import { PRIORITY } from '../src/jobs/define.ts';
import { isDatabaseUnavailable } from '../src/domain/database-unavailable.ts';
import { contextOf, inSpan, SpanKind } from '../src/observability/tracing.ts';
import type { CronDefinition, TaskDefinition } from './define.ts';
import { deleteStoredFilesTask } from './delete-stored-files.ts';
import { deliverWebhookTask } from './deliver-webhook.ts';
import { expireStoredFilesCron } from './expire-stored-files.ts';
import { expireUploadsCron } from './expire-uploads.ts';
import { exportTeamTask } from './export-team.ts';
import { pollUpstreamTask } from './poll-upstream.ts';
import { pruneSignInStateCron } from './prune-sign-in-state.ts';
import { purgeAuditLogCron } from './purge-audit-log.ts';
import { purgeIdempotencyKeysCron } from './purge-idempotency-keys.ts';
import { purgeRateLimitHitsCron } from './purge-rate-limit-hits.ts';
import { runCampaignTask } from './run-campaign.ts';
import { runGenerationTask } from './run-generation.ts';
import { scrapeAdLibraryTask } from './scrape-ad-library.ts';
import { sweepGenerationsCron } from './sweep-generations.ts';
import type { JobContext } from './task-context.ts';

/** The worker's tasks: one file each in this folder, each running one job contract of src/jobs. */
export const TASKS: readonly TaskDefinition[] = [runGenerationTask, pollUpstreamTask, deliverWebhookTask, runCampaignTask, scrapeAdLibraryTask, deleteStoredFilesTask, exportTeamTask];
export const CRONS: readonly CronDefinition[] = [sweepGenerationsCron, purgeIdempotencyKeysCron, purgeRateLimitHitsCron, pruneSignInStateCron, purgeAuditLogCron, expireStoredFilesCron, expireUploadsCron];

/**
 * graphile-worker's crontab, from the cron definitions. Workers take jobs by priority, then by
 * when they were due: at the default priority a cron's job waits behind every job queued before
 * it, so under a backlog the deadline sweeper ran minutes late (the chaos soak saw generations
 * processing well past their deadline). Maintenance is short and goes first.
 */
export const crontab = (): string => CRONS.map((c) => `${c.schedule} ${c.name} ?priority=${PRIORITY.maintenance}`).join('\n');

/**
 * graphile-worker's task list: each task checks its payload against its job contract and runs its handler.
 * A handler stopped by the worker's shutdown (its abort signal) gives its attempt back before it is
 * released; so does one that failed on a database outage, once the database answers again.
 */
export function taskList(ctx: JobContext, tasks: readonly TaskDefinition[] = TASKS, crons: readonly CronDefinition[] = CRONS): TaskList {
  const list: TaskList = {};
  for (const { job, handler } of tasks) {
    list[job.name] = async (raw, helpers) => {
      const payload = (raw ?? {}) as { traceparent?: unknown; generation_id?: unknown };
      const attributes = { 'adforge.job': job.name, 'adforge.job_id': helpers.job.id, 'adforge.attempt': helpers.job.attempts, ...(typeof payload.generation_id === 'string' ? { 'adforge.generation_id': payload.generation_id } : {}) };
      await inSpan(`job ${job.name}`, attributes, async () => {
        try {
          await handler(ctx, job.payload.parse(raw), helpers);
        } catch (e) {
          if (helpers.abortSignal?.aborted) await ctx.workerLiveness.releasedByShutdown(helpers.job.id);
          // A job of one attempt is never run again, by its contract (a webhook delivery).
          else if (isDatabaseUnavailable(e) && helpers.job.max_attempts > 1) await ctx.workerLiveness.afterOutage(helpers.job.id, helpers.abortSignal);
          throw e;
        }
      }, { kind: SpanKind.CONSUMER, parent: contextOf(payload.traceparent) });
    };
  }
  for (const cron of crons) list[cron.name] = async (_raw, helpers) => cron.handler(ctx, helpers);
  return list;
}
