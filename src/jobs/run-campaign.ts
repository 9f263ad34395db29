import { z } from 'zod';
import { defineJob } from './define.ts';

/** Submits a campaign's pending rows; a retry resumes where the last attempt stopped. */
export const runCampaignJob = defineJob({
  name: 'run_campaign',
  payload: z.object({ campaign_id: z.uuid() }),
  options: { maxAttempts: 25, jobKey: (p) => `campaign:${p.campaign_id}` },
});
