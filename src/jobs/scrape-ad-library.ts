import { z } from 'zod';
import { defineJob } from './define.ts';

/**
 * Scrapes one page of the ad library; the last failed attempt fails the job and refunds it. A
 * crashed worker's scrape is picked up again: upserts make a rerun harmless.
 */
export const scrapeAdLibraryJob = defineJob({
  name: 'scrape_ad_library',
  payload: z.object({ job_id: z.uuid() }),
  options: { maxAttempts: 3, jobKey: (p) => `scrape:${p.job_id}` },
});
