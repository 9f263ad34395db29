import { runGenerationJob } from '../src/jobs/run-generation.ts';
import { defineTask } from './define.ts';

/** One generation, rendered; the runner is told which attempt this is and stops on the abort signal. */
export const runGenerationTask = defineTask(runGenerationJob, (ctx, { generation_id }, helpers) =>
  ctx.generationRunner.run(generation_id, { number: helpers.job.attempts, max: helpers.job.max_attempts }, helpers.abortSignal));
