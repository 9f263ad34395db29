import { z } from 'zod';
import { defineJob } from './define.ts';

/** A generation's job key is this and its id (the create statement builds it in SQL too). */
export const GENERATION_JOB_KEY_PREFIX = 'generation:';

/** Renders one generation; a transient failure throws for a retry with backoff, the last one fails and refunds. */
export const runGenerationJob = defineJob({
  name: 'run_generation',
  payload: z.object({ generation_id: z.uuid() }),
  options: { maxAttempts: (config) => config.generationMaxAttempts, jobKey: (p) => GENERATION_JOB_KEY_PREFIX + p.generation_id },
});
