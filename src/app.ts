import type { Logger } from 'pino';
import { createMetaAdSource } from './adapters/ad-library-source/meta-source.ts';
import type { Config } from './config.ts';
import { openDatabase, type Database } from './db/connect.ts';
import { migrate } from './db/migrate.ts';
import type { EngineRegistry } from './adapters/engines/registry.ts';
import { buildEngines } from './adapters/engines/from-config.ts';
import { createSpeechEngine } from './adapters/engines/speech/select.ts';
import { createPgEventBus, type EventBus } from './events/pg-events.ts';
import type { JobContext } from '../tasks/task-context.ts';
import { createAdLibraryReader } from './services/ad-library/read.ts';
import { createScrapeRunner } from './services/ad-library/runner.ts';
import { createAdLibraryScraper } from './services/ad-library/scrape.ts';
import { createAuthService } from './services/auth.ts';
import { createKeyCache } from './services/key-cache.ts';
import { createAvatarService } from './services/avatars.ts';
import { filesSigningSecret, seedPlatformAvatars } from './services/bootstrap.ts';
import { createBrandService } from './services/brands.ts';
import { createCampaignService } from './services/campaigns/campaigns.ts';
import { createRowChecker } from './services/campaigns/check.ts';
import { createCampaignRunner } from './services/campaigns/runner.ts';
import type { Deps } from './services/context.ts';
import { createQuoteService } from './services/quotes.ts';
import { createRateLimiter } from './services/rate-limiter.ts';
import { createGenerationCanceller } from './services/generations/cancel.ts';
import { createCreditService } from './services/credits.ts';
import { createGenerationCreator } from './services/generations/create.ts';
import { createGenerationDeleter } from './services/generations/delete.ts';
import { createGenerationLifecycle } from './services/generations/lifecycle.ts';
import { createGenerationReader } from './services/generations/read.ts';
import { createGenerationRunner } from './services/generations/runner.ts';
import { createUpstreamCore } from './services/generations/upstream.ts';
import { createMaintenanceService } from './services/maintenance.ts';
import { createRetentionService } from './services/retention.ts';
import { createStorageUsage } from './services/storage-usage.ts';
import { largestTeamStorage, storageTotals } from './repositories/storage-usage.ts';
import { createEngineStatus } from './services/engine-status.ts';
import { createProductService } from './services/products.ts';
import { createImageFetcher } from './services/remote-images.ts';
import { createUploadService, withUploadedImages } from './services/uploads.ts';
import { createTeamService } from './services/teams.ts';
import { createTeamKeyService } from './services/team-keys.ts';
import { createTeamDeleter } from './services/team-deletion.ts';
import { createTeamExporter } from './services/team-export.ts';
import { createTeamExports } from './services/team-exports.ts';
import { createKeyUsage } from './services/key-usage.ts';
import { createSessionService } from './services/sessions.ts';
import { createMemberService } from './services/members.ts';
import { createAuditService } from './services/audit.ts';
import { createTemplateService } from './services/templates.ts';
import { createVoiceoverService } from './services/voiceovers.ts';
import { createVoiceService, seedVoices } from './services/voices.ts';
import { createWebhookService } from './services/webhooks.ts';
import { createWorkerLiveness } from './services/worker-liveness.ts';
import { createReadiness } from './services/readiness.ts';
import { createStorage } from './adapters/storage/from-config.ts';
import { createMetrics, type Metrics } from './observability/metrics.ts';
import { startTracing, type Tracing } from './observability/tracing.ts';
import { jobCountsByTask } from './repositories/jobs.ts';
import { listBreakers } from './repositories/engine-breakers.ts';

/**
 * The composition root: the database, storage, engines, the ad source, the event bus, every
 * service and every runner are built here once from the config; the HTTP server, the worker and the CLI take what it built.
 */
export interface App extends Deps {
  database: Database;
  /** LISTEN/NOTIFY for subscriptions: one listening connection per process, opened on the first subscriber. */
  events: EventBus;
  services: Services;
  /** The slow halves run by the worker's jobs. */
  runners: Runners;
  /** What the worker's tasks call (tasks/). */
  jobs: JobContext;
  /** Prometheus metrics of this process (GET /metrics). */
  metrics: Metrics;
  /** OpenTelemetry traces of this process (on with OTEL_EXPORTER_OTLP_ENDPOINT). */
  tracing: Tracing;
  close: () => Promise<void>;
}

function buildServices(deps: Deps, engines: EngineRegistry, pool: Database['pool']) {
  const speech = createSpeechEngine({ timeoutMs: deps.config.speechTimeoutSeconds * 1000, allowPrivate: deps.config.allowPrivateNetworkUrls, elevenlabs: deps.config.speech.elevenlabs });
  const voices = createVoiceService(deps, speech);
  const voiceovers = createVoiceoverService(deps, voices, speech);
  const lifecycle = createGenerationLifecycle(deps);
  const keyCache = createKeyCache();
  const credits = createCreditService(deps);
  const generationCreator = createGenerationCreator({ ...deps, engines });
  const adLibraryScraper = createAdLibraryScraper(deps);
  const keyUsage = createKeyUsage(deps);
  const teams = createTeamService(deps, keyCache);
  const generationDeleter = createGenerationDeleter({ ...deps, engines });
  return {
    speech,
    voices,
    voiceovers,
    adLibrary: createAdLibraryReader(deps),
    adLibraryScraper,
    campaigns: createCampaignService(deps, createRowChecker(deps.db, voices, engines)),
    auth: createAuthService(deps, keyCache, keyUsage),
    teams,
    teamKeys: createTeamKeyService(deps, teams, keyUsage),
    keyUsage,
    sessions: createSessionService(deps),
    members: createMemberService(deps),
    audit: createAuditService(deps),
    keyCache,
    rateLimiter: deps.config.rateLimitStore === 'memory' ? createRateLimiter({ store: 'memory' }) : createRateLimiter({ store: 'postgres', db: deps.db }),
    credits,
    products: createProductService(deps),
    brands: createBrandService(deps),
    avatars: createAvatarService(deps),
    generationCreator,
    generationCanceller: createGenerationCanceller(deps, lifecycle),
    generationDeleter,
    retention: createRetentionService(deps, generationDeleter),
    quotes: createQuoteService(generationCreator, voiceovers, adLibraryScraper, credits),
    generationReader: createGenerationReader(deps),
    templates: createTemplateService(deps),
    webhooks: createWebhookService(deps),
    lifecycle,
    maintenance: createMaintenanceService(deps, lifecycle),
    workerLiveness: createWorkerLiveness(deps),
    readiness: createReadiness(deps, pool),
    engineStatus: createEngineStatus(deps, engines),
    uploads: createUploadService(deps),
    storageUsage: createStorageUsage(deps),
    teamExporter: createTeamExporter(deps),
    teamExports: createTeamExports(deps, createTeamExporter(deps)),
    teamDeleter: createTeamDeleter(deps, { keyCache, canceller: createGenerationCanceller(deps, lifecycle), deleter: createGenerationDeleter({ ...deps, engines }) }),
  };
}
export type Services = ReturnType<typeof buildServices>;

function buildRunners(deps: Deps, services: Services, engines: EngineRegistry, events: EventBus) {
  const { config } = deps;
  const { adLibrary } = config;
  const adSource = createMetaAdSource({
    baseUrl: adLibrary.sourceUrl,
    ...(adLibrary.sourceToken ? { accessToken: adLibrary.sourceToken } : {}),
    allowPrivate: config.allowPrivateNetworkUrls,
    backoffMs: adLibrary.sourceBackoffMs,
    maxAttempts: adLibrary.sourceMaxAttempts,
  });
  const upstream = createUpstreamCore({ ...deps, engines, lifecycle: services.lifecycle, speech: services.speech, events });
  return {
    upstream,
    generations: createGenerationRunner({ ...deps, engines, upstream }),
    scrapes: createScrapeRunner(deps, adSource),
    campaigns: createCampaignRunner(deps, services.generationCreator, services.voiceovers),
  };
}
export type Runners = ReturnType<typeof buildRunners>;

/** Opens the database, brings the schema up to date and builds everything once. */
export async function buildApp(config: Readonly<Config>, log: Logger, opts: { seed?: boolean } = {}): Promise<App> {
  const engines = buildEngines(config);
  const tracing = await startTracing(config.tracing);
  const database = await openDatabase(config, (line) => log.info(line), 10, (line) => log.warn(line));
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
    const metrics = createMetrics({
      pool: database.pool,
      jobCounts: () => jobCountsByTask(db),
      breakers: async () => (await listBreakers(db)).map((b) => ({ provider: b.provider, open: b.open_until !== null && b.open_until > new Date() })),
      subscriptions: () => events.subscriberCount,
      storage: async () => ({ totals: await storageTotals(db), teams: await largestTeamStorage(db, config.storageMetricTeams) }),
    });
    const deps: Deps = { config, db, storage, log, fetchImage: withUploadedImages(createImageFetcher({ allowPrivate: config.allowPrivateNetworkUrls }), { db, storage }), metrics };
    if (opts.seed !== false) {
      await seedPlatformAvatars(deps);
      await seedVoices(deps);
    }
    const services = buildServices(deps, engines, database.pool);
    const events = createPgEventBus({
      connectionString: database.url,
      log,
      onReceived: (_channel, payload) => {
        const at = (payload as { at?: unknown }).at;
        if (typeof at === 'number') metrics.events.lag.observe(Math.max(0, Date.now() - at) / 1000);
      },
    });
    const runners = buildRunners(deps, services, engines, events);
    const jobs: JobContext = {
      generationRunner: runners.generations,
      scrapeRunner: runners.scrapes,
      campaignRunner: runners.campaigns,
      webhooks: services.webhooks,
      maintenance: services.maintenance,
      upstream: runners.upstream,
      workerLiveness: services.workerLiveness,
      teamExports: services.teamExports,
      storedFiles: services.generationDeleter,
      uploads: services.uploads,
      retention: services.retention,
    };
    const close = async () => {
      await events.close();
      await database.close();
      await tracing.flush().catch((err: unknown) => log.warn({ err }, 'could not send the last spans'));
    };
    return { ...deps, database, events, services, runners, jobs, metrics, tracing, close };
  } catch (e) {
    await database.close().catch(() => {});
    throw e;
  }
}

/** `adforge migrate`: the database opened, the schema brought up to date, nothing else built. */
export async function migrateDatabase(config: Readonly<Config>, log: Logger): Promise<string[]> {
  const database = await openDatabase(config, (line) => log.info(line));
  try {
    return await migrate(database.pool, (line) => log.info(line));
  } finally {
    await database.close().catch(() => {});
  }
}
