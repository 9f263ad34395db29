import type { Task } from 'graphile-worker';
import { z } from 'zod';
import type { CampaignRunner } from '../src/services/campaigns/runner.ts';

const payload = z.object({ campaign_id: z.uuid() });

/** Submits a campaign's pending rows; throwing asks graphile-worker for a retry, which resumes where it stopped. */
export const runCampaign =
  (runner: CampaignRunner): Task =>
  async (raw) => {
    const { campaign_id } = payload.parse(raw);
    await runner.run(campaign_id);
  };
