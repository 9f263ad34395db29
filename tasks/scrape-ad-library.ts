import type { Task } from 'graphile-worker';
import { z } from 'zod';
import type { ScrapeRunner } from '../src/services/ad-library/runner.ts';

const payload = z.object({ job_id: z.uuid() });

/** Scrapes one page of the ad library; throwing asks graphile-worker for a retry with backoff. */
export const scrapeAdLibrary =
  (runner: ScrapeRunner): Task =>
  async (raw, helpers) => {
    const { job_id } = payload.parse(raw);
    await runner.run(job_id, { number: helpers.job.attempts, max: helpers.job.max_attempts }, helpers.abortSignal);
  };
