import type { TaskList } from 'graphile-worker';
import type { App } from '../src/app.ts';
import { createLocalEngine } from '../src/engines/local/local-engine.ts';
import { createEngineRegistry } from '../src/engines/registry.ts';
import { RUN_GENERATION } from '../src/services/generations/create.ts';
import { DELIVER_WEBHOOK } from '../src/services/generations/lifecycle.ts';
import { createGenerationRunner } from '../src/services/generations/runner.ts';
import { createMetaAdSource } from '../src/adlibrary/meta-source.ts';
import { createScrapeRunner } from '../src/services/ad-library/runner.ts';
import { SCRAPE_AD_LIBRARY } from '../src/services/ad-library/scrape.ts';
import { createCampaignRunner } from '../src/services/campaigns/runner.ts';
import { RUN_CAMPAIGN } from '../src/services/campaigns/campaigns.ts';
import { deliverWebhook } from './deliver-webhook.ts';
import { runCampaign } from './run-campaign.ts';
import { purgeRateLimitHits } from './purge-rate-limit-hits.ts';
import { scrapeAdLibrary } from './scrape-ad-library.ts';
import { purgeIdempotencyKeys } from './purge-idempotency-keys.ts';
import { runGeneration } from './run-generation.ts';
import { sweepGenerations } from './sweep-generations.ts';

export const CRONTAB = ['* * * * * sweep_generations', '17 * * * * purge_idempotency_keys', '23 * * * * purge_rate_limit_hits'].join('\n');

/** graphile-worker tasks, one file each; each checks its payload and calls a service. */
export function buildTaskList(app: App): TaskList {
  const engines = createEngineRegistry([createLocalEngine({ delayMs: app.config.localEngineDelayMs })], app.config.engineRoutes);
  const runner = createGenerationRunner({ ...app, engines, lifecycle: app.services.lifecycle });
  const { adLibrary } = app.config;
  const adSource = createMetaAdSource({
    baseUrl: adLibrary.sourceUrl,
    ...(adLibrary.sourceToken ? { accessToken: adLibrary.sourceToken } : {}),
    allowPrivate: app.config.allowPrivateNetworkUrls,
    backoffMs: adLibrary.sourceBackoffMs,
    maxAttempts: adLibrary.sourceMaxAttempts,
  });
  return {
    [SCRAPE_AD_LIBRARY]: scrapeAdLibrary(createScrapeRunner(app, adSource)),
    purge_rate_limit_hits: purgeRateLimitHits(app.db),
    [RUN_CAMPAIGN]: runCampaign(createCampaignRunner(app, app.services.generationCreator, app.services.voiceovers)),
    [RUN_GENERATION]: runGeneration(runner),
    [DELIVER_WEBHOOK]: deliverWebhook(app.services.webhooks),
    sweep_generations: sweepGenerations(app.db, app.services.lifecycle),
    purge_idempotency_keys: purgeIdempotencyKeys(app.db),
  };
}
