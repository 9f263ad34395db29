import path from 'node:path';
import type { Logger } from 'pino';
import type { Config } from './config.ts';
import { openDatabase, type Database } from './db/connect.ts';
import { migrate } from './db/migrate.ts';
import { createAuthService } from './services/auth.ts';
import { createAvatarService } from './services/avatars.ts';
import { filesSigningSecret, seedPlatformAvatars } from './services/bootstrap.ts';
import { createBrandService } from './services/brands.ts';
import type { Deps } from './services/context.ts';
import { createCreditService } from './services/credits.ts';
import { createProductService } from './services/products.ts';
import { createImageFetcher } from './services/remote-images.ts';
import { createTeamService } from './services/teams.ts';
import { createGenerationCreator } from './services/generations/create.ts';
import { createGenerationLifecycle } from './services/generations/lifecycle.ts';
import { createGenerationReader } from './services/generations/read.ts';
import { createTemplateService } from './services/templates.ts';
import { createWebhookService } from './services/webhooks.ts';
import { createVoiceService, seedVoices } from './services/voices.ts';
import { createVoiceoverService } from './services/voiceovers.ts';
import type { SpeechEngine } from './engines/speech/engine.ts';
import { createSpeechEngine } from './engines/speech/select.ts';
import { createAdLibraryReader } from './services/ad-library/read.ts';
import { createAdLibraryScraper } from './services/ad-library/scrape.ts';
import { createCampaignService } from './services/campaigns/campaigns.ts';
import { createRowChecker } from './services/campaigns/check.ts';
import { createStorage } from './storage/from-config.ts';

export interface App extends Deps {
  database: Database;
  services: ReturnType<typeof buildServices>;
  close: () => Promise<void>;
}

function buildServices(deps: Deps) {
  const speech: SpeechEngine = createSpeechEngine(deps.config);
  const voices = createVoiceService(deps, speech);
  return {
    voices,
    voiceovers: createVoiceoverService(deps, voices, speech),
    adLibrary: createAdLibraryReader(deps),
    adLibraryScraper: createAdLibraryScraper(deps),
    campaigns: createCampaignService(deps, createRowChecker(deps.db, voices)),
    auth: createAuthService(deps),
    teams: createTeamService(deps),
    credits: createCreditService(deps),
    products: createProductService(deps),
    brands: createBrandService(deps),
    avatars: createAvatarService(deps),
    generationCreator: createGenerationCreator(deps),
    generationReader: createGenerationReader(deps),
    templates: createTemplateService(deps),
    webhooks: createWebhookService(deps),
    lifecycle: createGenerationLifecycle(deps),
  };
}

/** Opens the database, brings the schema up to date and builds every service once. */
export async function buildApp(config: Readonly<Config>, log: Logger, opts: { seed?: boolean } = {}): Promise<App> {
  const database = await openDatabase(config, (line) => log.info(line));
  try {
    await migrate(database.pool, (line) => log.info(line));
    const db = database.db;
    const storage = createStorage({
      storage: config.storage,
      dataDir: config.dataDir,
      publicBaseUrl: config.publicBaseUrl,
      signingSecret: await filesSigningSecret({ db, config }),
      ...(config.s3 ? { s3: config.s3 } : {}),
    });
    const deps: Deps = {
      config,
      db,
      storage,
      log,
      fetchImage: createImageFetcher({ allowPrivate: config.allowPrivateNetworkUrls }),
    };
    if (opts.seed !== false) {
      await seedPlatformAvatars(deps);
      await seedVoices(deps);
    }
    return { ...deps, database, services: buildServices(deps), close: database.close };
  } catch (e) {
    await database.close().catch(() => {});
    throw e;
  }
}

export const filesRoot = (config: Pick<Config, 'dataDir'>) => path.join(config.dataDir, 'files');
