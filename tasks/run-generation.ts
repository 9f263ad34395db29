import type { Task } from 'graphile-worker';
import { z } from 'zod';
import type { GenerationRunner } from '../src/services/generations/runner.ts';

const payload = z.object({ generation_id: z.uuid() });

/** Renders one generation; throwing asks graphile-worker for a retry with backoff. */
export const runGeneration =
  (runner: GenerationRunner): Task =>
  async (raw, helpers) => {
    const { generation_id } = payload.parse(raw);
    await runner.run(generation_id, { number: helpers.job.attempts, max: helpers.job.max_attempts });
  };
