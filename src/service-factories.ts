import type pg from 'pg';
import type { EngineRegistry } from './adapters/engines/registry.ts';
import type { createSpeechEngine } from './adapters/engines/speech/select.ts';
import type { createAdLibraryReader } from './services/ad-library/read.ts';
import type { createAdLibraryScraper } from './services/ad-library/scrape.ts';
import type { createAuditService } from './services/audit.ts';
import type { createAuthService } from './services/auth.ts';
import type { createAvatarService } from './services/avatars.ts';
import type { createBrandService } from './services/brands.ts';
import type { createCampaignService } from './services/campaigns/campaigns.ts';
import type { Deps } from './services/deps.ts';
import type { createCreditService } from './services/credits.ts';
import type { createEngineStatus } from './services/engine-status.ts';
import type { createGenerationCanceller } from './services/generations/cancel.ts';
import type { createGenerationCreator } from './services/generations/create.ts';
import type { createGenerationDeleter } from './services/generations/delete.ts';
import type { createGenerationLifecycle } from './services/generations/lifecycle.ts';
import type { createGenerationReader } from './services/generations/read.ts';
import type { createKeyCache } from './services/key-cache.ts';
import type { createKeyUsage } from './services/key-usage.ts';
import type { createMaintenanceService } from './services/maintenance.ts';
import type { createMemberService } from './services/members.ts';
import type { createProductService } from './services/products.ts';
import type { createQuoteService } from './services/quotes.ts';
import type { createRateLimiter } from './services/rate-limiter.ts';
import type { createReadiness } from './services/readiness.ts';
import type { createRetentionService } from './services/retention.ts';
import type { createSessionService } from './services/sessions.ts';
import type { createStorageUsage } from './services/storage-usage.ts';
import type { createTeamDeleter } from './services/team-deletion.ts';
import type { createTeamExporter } from './services/team-export.ts';
import type { createTeamExports } from './services/team-exports.ts';
import type { createTeamKeyService } from './services/team-keys.ts';
import type { createTeamService } from './services/teams.ts';
import type { createTemplateService } from './services/templates.ts';
import type { createUploadService } from './services/uploads.ts';
import type { createVoiceoverService } from './services/voiceovers.ts';
import type { createVoiceService } from './services/voices.ts';
import type { createWebhookService } from './services/webhooks.ts';
import type { createWorkerLiveness } from './services/worker-liveness.ts';

/** Every service of the app, by the name transports, tasks and commands read it under. */
export interface Services {
  speech: ReturnType<typeof createSpeechEngine>;
  voices: ReturnType<typeof createVoiceService>;
  voiceovers: ReturnType<typeof createVoiceoverService>;
  adLibrary: ReturnType<typeof createAdLibraryReader>;
  adLibraryScraper: ReturnType<typeof createAdLibraryScraper>;
  campaigns: ReturnType<typeof createCampaignService>;
  auth: ReturnType<typeof createAuthService>;
  teams: ReturnType<typeof createTeamService>;
  teamKeys: ReturnType<typeof createTeamKeyService>;
  keyUsage: ReturnType<typeof createKeyUsage>;
  sessions: ReturnType<typeof createSessionService>;
  members: ReturnType<typeof createMemberService>;
  audit: ReturnType<typeof createAuditService>;
  keyCache: ReturnType<typeof createKeyCache>;
  rateLimiter: ReturnType<typeof createRateLimiter>;
  credits: ReturnType<typeof createCreditService>;
  products: ReturnType<typeof createProductService>;
  brands: ReturnType<typeof createBrandService>;
  avatars: ReturnType<typeof createAvatarService>;
  generationCreator: ReturnType<typeof createGenerationCreator>;
  generationCanceller: ReturnType<typeof createGenerationCanceller>;
  generationDeleter: ReturnType<typeof createGenerationDeleter>;
  retention: ReturnType<typeof createRetentionService>;
  quotes: ReturnType<typeof createQuoteService>;
  generationReader: ReturnType<typeof createGenerationReader>;
  templates: ReturnType<typeof createTemplateService>;
  webhooks: ReturnType<typeof createWebhookService>;
  lifecycle: ReturnType<typeof createGenerationLifecycle>;
  maintenance: ReturnType<typeof createMaintenanceService>;
  workerLiveness: ReturnType<typeof createWorkerLiveness>;
  readiness: ReturnType<typeof createReadiness>;
  engineStatus: ReturnType<typeof createEngineStatus>;
  uploads: ReturnType<typeof createUploadService>;
  storageUsage: ReturnType<typeof createStorageUsage>;
  teamExporter: ReturnType<typeof createTeamExporter>;
  teamExports: ReturnType<typeof createTeamExports>;
  teamDeleter: ReturnType<typeof createTeamDeleter>;
}

/**
 * What the services are made from, opened by the caller: the server and the worker give all of it
 * (src/app.ts); the admin CLI gives the database and the config alone (src/admin-app.ts).
 */
export interface Base {
  deps: Deps;
  db: Deps['db'];
  config: Deps['config'];
  engines: EngineRegistry;
  /** The database's pool, for the readiness check. */
  pool: pg.Pool;
}

type Parts = Base & Services;
type Need = <K extends keyof Parts>(names: readonly K[]) => Promise<Pick<Parts, K>>;
type Factory<T> = (need: Need) => Promise<T>;

/** A service: the parts it is made from, its module (imported on use) and how it is made from them. */
function made<K extends keyof Parts, M, T>(needs: readonly K[], load: () => Promise<M>, make: (m: M, parts: Pick<Parts, K>) => T): Factory<T> {
  return async (need) => {
    const [m, parts] = await Promise.all([load(), need(needs)]);
    return make(m, parts);
  };
}

/**
 * How each service is made: the one table the server, the worker and the admin CLI build from.
 * Modules are imported on use, so a caller that builds a few services loads only theirs (the admin
 * CLI loads no engine, storage, speech or event-bus module).
 */
export const SERVICE_FACTORIES: { readonly [K in keyof Services]: Factory<Services[K]> } = {
  speech: made(['config'], () => import('./adapters/engines/speech/select.ts'), (m, { config }) => m.createSpeechEngine({ timeoutMs: config.speechTimeoutSeconds * 1000, callTimeoutCapMs: config.upstream.callTimeoutCapMs, allowPrivate: config.allowPrivateNetworkUrls, elevenlabs: config.speech.elevenlabs })),
  voices: made(['deps', 'speech'], () => import('./services/voices.ts'), (m, { deps, speech }) => m.createVoiceService(deps, speech)),
  voiceovers: made(['deps', 'voices', 'speech'], () => import('./services/voiceovers.ts'), (m, { deps, voices, speech }) => m.createVoiceoverService(deps, voices, speech)),
  adLibrary: made(['deps'], () => import('./services/ad-library/read.ts'), (m, { deps }) => m.createAdLibraryReader(deps)),
  adLibraryScraper: made(['db', 'config'], () => import('./services/ad-library/scrape.ts'), (m, { db, config }) => m.createAdLibraryScraper({ db, config })),
  campaigns: made(['deps', 'voices', 'engines'], async () => ({ ...(await import('./services/campaigns/campaigns.ts')), ...(await import('./services/campaigns/check.ts')) }), (m, { deps, voices, engines }) =>
    m.createCampaignService(deps, m.createRowChecker(deps.db, voices, engines)),
  ),
  auth: made(['db', 'config', 'keyCache', 'keyUsage'], () => import('./services/auth.ts'), (m, { db, config, keyCache, keyUsage }) => m.createAuthService({ db, config }, keyCache, keyUsage)),
  teams: made(['db', 'keyCache'], () => import('./services/teams.ts'), (m, { db, keyCache }) => m.createTeamService({ db }, keyCache)),
  teamKeys: made(['db', 'teams', 'keyUsage'], () => import('./services/team-keys.ts'), (m, { db, teams, keyUsage }) => m.createTeamKeyService({ db }, teams, keyUsage)),
  keyUsage: made(['db'], () => import('./services/key-usage.ts'), (m, { db }) => m.createKeyUsage({ db })),
  sessions: made(['db'], () => import('./services/sessions.ts'), (m, { db }) => m.createSessionService({ db })),
  members: made(['db', 'config'], () => import('./services/members.ts'), (m, { db, config }) => m.createMemberService({ db, config })),
  audit: made(['db', 'config'], () => import('./services/audit.ts'), (m, { db, config }) => m.createAuditService({ db, config })),
  keyCache: made([], () => import('./services/key-cache.ts'), (m) => m.createKeyCache()),
  rateLimiter: made(['db', 'config'], () => import('./services/rate-limiter.ts'), (m, { db, config }) =>
    config.rateLimitStore === 'memory' ? m.createRateLimiter({ store: 'memory' }) : m.createRateLimiter({ store: 'postgres', db }),
  ),
  credits: made(['db', 'config'], () => import('./services/credits.ts'), (m, { db, config }) => m.createCreditService({ db, config })),
  products: made(['deps'], () => import('./services/products.ts'), (m, { deps }) => m.createProductService(deps)),
  brands: made(['db'], () => import('./services/brands.ts'), (m, { db }) => m.createBrandService({ db })),
  avatars: made(['deps'], () => import('./services/avatars.ts'), (m, { deps }) => m.createAvatarService(deps)),
  generationCreator: made(['deps', 'engines'], () => import('./services/generations/create.ts'), (m, { deps, engines }) => m.createGenerationCreator({ ...deps, engines })),
  generationCanceller: made(['deps', 'lifecycle'], () => import('./services/generations/cancel.ts'), (m, { deps, lifecycle }) => m.createGenerationCanceller(deps, lifecycle)),
  generationDeleter: made(['deps', 'engines'], () => import('./services/generations/delete.ts'), (m, { deps, engines }) => m.createGenerationDeleter({ ...deps, engines })),
  retention: made(['deps', 'generationDeleter'], () => import('./services/retention.ts'), (m, { deps, generationDeleter }) => m.createRetentionService(deps, generationDeleter)),
  quotes: made(['generationCreator', 'voiceovers', 'adLibraryScraper', 'credits'], () => import('./services/quotes.ts'), (m, s) =>
    m.createQuoteService(s.generationCreator, s.voiceovers, s.adLibraryScraper, s.credits),
  ),
  generationReader: made(['deps'], () => import('./services/generations/read.ts'), (m, { deps }) => m.createGenerationReader(deps)),
  templates: made(['db'], () => import('./services/templates.ts'), (m, { db }) => m.createTemplateService({ db })),
  webhooks: made(['deps'], () => import('./services/webhooks.ts'), (m, { deps }) => m.createWebhookService(deps)),
  lifecycle: made(['deps'], () => import('./services/generations/lifecycle.ts'), (m, { deps }) => m.createGenerationLifecycle(deps)),
  maintenance: made(['db', 'config', 'lifecycle'], () => import('./services/maintenance.ts'), (m, { db, config, lifecycle }) => m.createMaintenanceService({ db, config }, lifecycle)),
  workerLiveness: made(['db', 'config'], () => import('./services/worker-liveness.ts'), (m, { db, config }) => m.createWorkerLiveness({ db, config })),
  readiness: made(['deps', 'pool'], () => import('./services/readiness.ts'), (m, { deps, pool }) => m.createReadiness(deps, pool)),
  engineStatus: made(['db', 'config', 'engines'], () => import('./services/engine-status.ts'), (m, { db, config, engines }) => m.createEngineStatus({ db, config }, engines)),
  uploads: made(['deps'], () => import('./services/uploads.ts'), (m, { deps }) => m.createUploadService(deps)),
  storageUsage: made(['deps'], () => import('./services/storage-usage.ts'), (m, { deps }) => m.createStorageUsage(deps)),
  teamExporter: made(['deps'], () => import('./services/team-export.ts'), (m, { deps }) => m.createTeamExporter(deps)),
  teamExports: made(['deps', 'teamExporter'], () => import('./services/team-exports.ts'), (m, { deps, teamExporter }) => m.createTeamExports(deps, teamExporter)),
  teamDeleter: made(['deps', 'keyCache', 'generationCanceller', 'generationDeleter'], () => import('./services/team-deletion.ts'), (m, s) =>
    m.createTeamDeleter(s.deps, { keyCache: s.keyCache, canceller: s.generationCanceller, deleter: s.generationDeleter }),
  ),
};

export const SERVICE_NAMES = Object.keys(SERVICE_FACTORIES) as (keyof Services)[];

/**
 * The services named, each made once with whatever it is made from (other services first); a
 * part of `base` a service needs and the caller did not give is an error naming both.
 */
export async function buildServices<K extends keyof Services>(base: Partial<Base>, names: readonly K[]): Promise<Pick<Services, K>> {
  const building = new Map<keyof Parts, Promise<unknown>>();
  const one = (name: keyof Parts, by: string): Promise<unknown> => {
    if (Object.hasOwn(base, name)) return Promise.resolve(base[name as keyof Base]);
    if (!Object.hasOwn(SERVICE_FACTORIES, name)) return Promise.reject(new Error(`${by} is made from ${name}, which this caller did not give`));
    let made = building.get(name);
    if (!made) {
      const factory = SERVICE_FACTORIES[name as keyof Services] as Factory<unknown>;
      building.set(name, (made = factory((needs) => some(needs, name))));
    }
    return made;
  };
  const some = async <N extends keyof Parts>(needs: readonly N[], by: string): Promise<Pick<Parts, N>> => {
    const values = await Promise.all(needs.map((n) => one(n, by)));
    return Object.fromEntries(needs.map((n, i) => [n, values[i]])) as Pick<Parts, N>;
  };
  return some(names, 'a caller') as Promise<Pick<Services, K>>;
}

/** The services a handler calls and no other, handed over at run time as well as in its type. */
export const pickServices = <K extends keyof Services>(services: Services, keys: readonly K[]): Pick<Services, K> =>
  Object.fromEntries(keys.map((k) => [k, services[k]])) as Pick<Services, K>;
