import { runCampaignJob } from '../src/jobs/run-campaign.ts';
import { defineTask } from './define.ts';

/** A campaign's pending rows, submitted. */
export const runCampaignTask = defineTask(runCampaignJob, (ctx, { campaign_id }) => ctx.campaignRunner.run(campaign_id));
