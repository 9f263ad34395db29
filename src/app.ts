import type { Logger } from 'pino';
import { createMetaAdSource } from './adapters/ad-library-source/meta-source.ts';
import type { Config } from './config.ts';
import { openDatabase, type Database } from './db/connect.ts';
import { migrate } from './db/migrate.ts';
import type { EngineRegistry } from './adapters/engines/registry.ts';
import { buildEngines } from './adapters/engines/from-config.ts';
import { lifecycleWords } from './adapters/engines/lifecycle.ts';
import { createPgEventBus, type EventBus } from './events/pg-events.ts';
import type { JobContext } from '../tasks/task-context.ts';
import { createScrapeRunner } from './services/ad-library/scrape-runner.ts';
import { filesSigningSecret, seedPlatformAvatars } from './services/bootstrap.ts';
import { createCampaignRunner } from './services/campaigns/campaign-runner.ts';
import type { Deps } from './services/deps.ts';
import { createGenerationRunner } from './services/generations/generation-runner.ts';
import { createUpstreamCore } from './services/generations/engine-jobs.ts';
import { largestTeamStorage, storageTotals } from './repositories/storage-usage.ts';
import { createImageFetcher } from './services/remote-images.ts';
import { buildServices, SERVICE_NAMES, type Services } from './service-factories.ts';
import { withUploadedImages } from './services/uploads.ts';
import { seedVoices } from './services/voices.ts';
import { createStorage } from './adapters/storage/from-config.ts';
import { createMetrics, type Metrics } from './observability/metrics.ts';
import { startTracing, type Tracing } from './observability/tracing.ts';
import { jobCountsByTask } from './repositories/jobs.ts';
import { listBreakers } from './repositories/engine-breakers.ts';

/**
 * The composition root: the database, storage, engines, the ad source, the event bus, every
 * service (from the one table of src/service-factories.ts) and every runner are built here once from the config; the HTTP server, the worker and the CLI take what it built.
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

function buildRunners(deps: Deps, services: Services, engines: EngineRegistry, events: EventBus) {
  const { config } = deps;
  const { adLibrary } = config;
  const adSource = createMetaAdSource({
    baseUrl: adLibrary.sourceUrl,
    ...(adLibrary.sourceToken ? { accessToken: adLibrary.sourceToken } : {}),
    allowPrivate: config.allowPrivateNetworkUrls,
    backoffMs: adLibrary.sourceBackoffMs,
    maxAttempts: adLibrary.sourceMaxAttempts,
    ...(config.upstream.callTimeoutCapMs ? { callTimeoutCapMs: config.upstream.callTimeoutCapMs } : {}),
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

/**
 * Opens the database, brings the schema up to date and builds everything once. A route to a model
 * its provider retired stops here; `allowRetired` builds it anyway, routes as configured (tests of
 * an adapter whose provider has since retired its model).
 */
export async function buildApp(config: Readonly<Config>, log: Logger, opts: { seed?: boolean; allowRetired?: boolean } = {}): Promise<App> {
  const engines = await buildEngines(config, { log, ...(opts.allowRetired ? { allowRetired: true } : {}) });
  warnOfLifecycle(engines, log);
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
    const services: Services = await buildServices({ deps, db, config, engines, pool: database.pool }, SERVICE_NAMES);
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

/** A deprecated model a route uses, and a retired one a route covers among live ones (refused at create), are said at every start. */
function warnOfLifecycle(engines: EngineRegistry, log: Logger): void {
  for (const f of engines.lifecycle()) {
    if (f.status === 'live' || f.stops) continue;
    const fields = { route: f.route, provider: f.provider, model: f.name, id: f.entry.id, status: f.status, date: f.date };
    if (f.status === 'deprecated') log.warn(fields, `${lifecycleWords(f)}: plan another route for ${f.name}`);
    else log.warn(fields, `${lifecycleWords(f)}: ${f.name} is left out of the route ${f.route}, and refused at create unless another provider of the route makes it`);
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
