import { z } from 'zod';
import { defineJob } from './define.ts';

/** Renders one generation; a transient failure throws for a retry with backoff, the last one fails and refunds. */
export const runGenerationJob = defineJob({
  name: 'run_generation',
  payload: z.object({ generation_id: z.uuid() }),
  options: { maxAttempts: (config) => config.generationMaxAttempts, jobKey: (p) => `generation:${p.generation_id}` },
});
