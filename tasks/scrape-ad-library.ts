import { scrapeAdLibraryJob } from '../src/jobs/scrape-ad-library.ts';
import { defineTask } from './define.ts';

/** One page of the ad library, scraped; the runner is told which attempt this is. */
export const scrapeAdLibraryTask = defineTask(scrapeAdLibraryJob, (ctx, { job_id }, helpers) =>
  ctx.scrapeRunner.run(job_id, { number: helpers.job.attempts, max: helpers.job.max_attempts }, helpers.abortSignal));
