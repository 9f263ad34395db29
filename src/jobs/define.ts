import type { JobHelpers } from 'graphile-worker';
import type { z } from 'zod';
import type { Config } from '../config.ts';
import type { Db } from '../db/pool.ts';
import { addJob } from '../repositories/jobs.ts';
import { currentTraceparent } from '../observability/tracing.ts';
import type { JobContext } from './context.ts';

/**
 * One job of the graphile-worker queue, in one place: its name, the shape of its payload (checked
 * when it is queued and again when it runs), how often it may run, and what it does. Producers
 * queue it with queueJob; the worker's task list and crontab are read off these definitions.
 */
export interface JobDefinition<S extends z.ZodType = z.ZodType> {
  name: string;
  payload: S;
  options: {
    /** Attempts before graphile-worker gives up; a function when an operator sets it. */
    maxAttempts: number | ((config: Readonly<Config>) => number);
    /** One queued job per key: queueing it again replaces the waiting one instead of adding another. */
    jobKey?: (payload: z.output<S>) => string;
    /** graphile-worker's priority (lower runs first; 0 when absent). Due jobs are taken by priority, then by age. */
    priority?: number;
  };
  /** Return means done; throwing asks graphile-worker for another attempt (with its backoff). */
  handler: (ctx: JobContext, payload: z.output<S>, helpers: JobHelpers) => Promise<void>;
}

/** A job the worker's crontab queues on a schedule (crontab syntax); its payload is the cron's own. */
export interface CronDefinition {
  name: string;
  schedule: string;
  handler: (ctx: JobContext, helpers: JobHelpers) => Promise<void>;
}

/**
 * graphile-worker priorities (lower runs first; new work is 0). Under a backlog of renders, a due
 * job of a lower number still runs next: maintenance (the deadline sweeper) first, then the work
 * that finishes what a provider was already paid for or a team already waits on (a look at an
 * upstream job, a webhook delivery). These are short and queued at most once per generation step,
 * so they cannot starve the renders.
 */
export const PRIORITY = { maintenance: -10, finishing: -5 } as const;

export const defineJob = <S extends z.ZodType>(def: JobDefinition<S>): JobDefinition<S> => def;
export const defineCron = (def: CronDefinition): CronDefinition => def;

/** Queues the job inside the caller's transaction, so the job exists if and only if its data does. */
export async function queueJob<S extends z.ZodType>(
  db: Db,
  job: JobDefinition<S>,
  payload: z.input<S>,
  opts: { config?: Readonly<Config>; runAt?: Date } = {},
): Promise<void> {
  const checked = job.payload.parse(payload) as z.output<S>;
  const { maxAttempts, jobKey, priority } = job.options;
  if (typeof maxAttempts === 'function' && !opts.config) throw new Error(`job ${job.name}: its attempts come from the configuration, which was not given`);
  // The trace that queued the job continues in it (src/observability/tracing.ts).
  const traceparent = currentTraceparent();
  await addJob(db, job.name, { ...(checked as Record<string, unknown>), ...(traceparent ? { traceparent } : {}) }, {
    maxAttempts: typeof maxAttempts === 'function' ? maxAttempts(opts.config!) : maxAttempts,
    ...(jobKey ? { jobKey: jobKey(checked) } : {}),
    ...(opts.runAt ? { runAt: opts.runAt } : {}),
    ...(priority ? { priority } : {}),
  });
}
