import type { JobHelpers } from 'graphile-worker';
import type { z } from 'zod';
import type { JobContract } from '../src/jobs/define.ts';
import type { JobContext } from './task-context.ts';

/**
 * A graphile-worker task: the job contract it runs (src/jobs: name, payload schema, attempts, key,
 * priority) and its handler. The task list (tasks/index.ts) checks the payload against the contract
 * before the handler sees it.
 */
export interface TaskDefinition<S extends z.ZodType = z.ZodType> {
  job: JobContract<S>;
  /** Return means done; throwing asks graphile-worker for another attempt (with its backoff). */
  handler: (ctx: JobContext, payload: z.output<S>, helpers: JobHelpers) => Promise<void>;
}

/** A task the worker's crontab queues on a schedule (crontab syntax); its payload is the cron's own. */
export interface CronDefinition {
  name: string;
  schedule: string;
  handler: (ctx: JobContext, helpers: JobHelpers) => Promise<void>;
}

export const defineTask = <S extends z.ZodType>(job: JobContract<S>, handler: TaskDefinition<S>['handler']): TaskDefinition<S> => ({ job, handler });
export const defineCron = (def: CronDefinition): CronDefinition => def;
