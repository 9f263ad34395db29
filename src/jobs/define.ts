import type { z } from 'zod';
import type { Config } from '../config.ts';
import type { Db } from '../db/pool.ts';
import { addJob, type JobSpec } from '../repositories/jobs.ts';
import { currentTraceparent } from '../observability/tracing.ts';

/**
 * One job of the graphile-worker queue as its producers see it: its name, the shape of its payload
 * (checked when it is queued and again when it runs), how often it may run, its key and priority.
 * No handler: the task that runs it is in tasks/ (one file per task), which imports this contract,
 * so a service that queues a job never imports what runs it.
 */
export interface JobContract<S extends z.ZodType = z.ZodType> {
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
}

/**
 * graphile-worker priorities (lower runs first; new work is 0). Under a backlog of renders, a due
 * job of a lower number still runs next: maintenance (the deadline sweeper) first, then the work
 * that finishes what a provider was already paid for or a team already waits on (a look at an
 * upstream job, a webhook delivery). These are short and queued at most once per generation step,
 * so they cannot starve the renders. A look a provider's callback asked for goes ahead of the
 * routine looks (their safety-net polls can be many, and due together): the callback is what the
 * team is waiting on.
 */
export const PRIORITY = { maintenance: -10, calledBack: -8, finishing: -5 } as const;

/** When a job is queued: its configuration (for attempts set by an operator), when it runs, and a priority other than its contract's. */
export interface JobOptions {
  config?: Readonly<Config>;
  runAt?: Date;
  priority?: number;
}

export const defineJob = <S extends z.ZodType>(contract: JobContract<S>): JobContract<S> => contract;

/**
 * The job as graphile-worker is asked to queue it: the payload checked by the contract's schema
 * (it throws on one the contract refuses), with the trace that queued it, its attempts, key and
 * priority. A repository that queues a job inside a larger statement takes this spec as it is.
 */
export function jobSpec<S extends z.ZodType>(job: JobContract<S>, payload: z.input<S>, opts: JobOptions = {}): JobSpec {
  const checked = job.payload.parse(payload) as z.output<S>;
  const { maxAttempts, jobKey } = job.options;
  const priority = opts.priority ?? job.options.priority;
  if (typeof maxAttempts === 'function' && !opts.config) throw new Error(`job ${job.name}: its attempts come from the configuration, which was not given`);
  // The trace that queued the job continues in it (src/observability/tracing.ts).
  const traceparent = currentTraceparent();
  return {
    identifier: job.name,
    payload: { ...(checked as Record<string, unknown>), ...(traceparent ? { traceparent } : {}) },
    maxAttempts: typeof maxAttempts === 'function' ? maxAttempts(opts.config!) : maxAttempts,
    ...(jobKey ? { jobKey: jobKey(checked) } : {}),
    ...(opts.runAt ? { runAt: opts.runAt } : {}),
    ...(priority ? { priority } : {}),
  };
}

/** Queues the job inside the caller's transaction, so the job exists if and only if its data does. */
export async function queueJob<S extends z.ZodType>(db: Db, job: JobContract<S>, payload: z.input<S>, opts: JobOptions = {}): Promise<void> {
  await addJob(db, jobSpec(job, payload, opts));
}
