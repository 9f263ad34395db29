import os from 'node:os';
import { BlockList, isIP } from 'node:net';
import type { TracingConfig } from './observability/tracing.ts';
import path from 'node:path';
import { z } from 'zod';
import { VOICES } from './domain/catalogue/voices.ts';
import { parseTierRateLimits, type BucketRule } from './domain/rate-limit.ts';
import type { Tier } from './domain/tiers.ts';
import { parseStorageQuotas } from './domain/storage-quota.ts';
import { MEDIA_TOOL_VARIABLES, mediaToolPaths, type MediaToolPaths } from './adapters/engines/media-tools.ts';
import { providerSettings, providerVariables, type ProviderSettings } from './adapters/engines/providers.ts';

const flag = z
  .enum(['true', 'false', '1', '0', ''])
  .default('false')
  .transform((v) => v === 'true' || v === '1');

/** An optional variable read by a parser that throws: its error's message is the variable's issue. */
const parsedBy = <T>(parse: (raw: string | undefined) => T) =>
  z.string().optional().transform((raw, ctx) => {
    try {
      return parse(raw);
    } catch (e) {
      ctx.addIssue({ code: 'custom', message: (e as Error).message });
      return z.NEVER;
    }
  });
const port = z.coerce.number().int().min(0).max(65535);

const TRUST_PROXY_HELP = 'false, a number of proxy hops from 1 to 10 (true means 1), or a comma-separated list of the proxies\' IP addresses or CIDR ranges';

/** TRUST_PROXY: never "every hop", which would let a client name its own address. */
function parseTrustProxy(raw: string, ctx: z.RefinementCtx): false | number | string[] {
  if (raw === '' || raw === 'false' || raw === '0') return false;
  if (raw === 'true') return 1;
  if (/^[0-9]+$/.test(raw)) {
    const hops = Number(raw);
    if (hops >= 1 && hops <= 10) return hops;
  } else {
    const entries = raw.split(',').map((e) => e.trim());
    const valid = entries.every((e) => {
      const [addr = '', bits, ...rest] = e.split('/');
      const family = isIP(addr);
      if (!family || rest.length) return false;
      return bits === undefined || (/^[0-9]{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128));
    });
    if (valid) return entries;
  }
  ctx.addIssue({ code: 'custom', message: `must be ${TRUST_PROXY_HELP}` });
  return z.NEVER;
}

const baseSchema = z.object({
  DATA_DIR: z.string().default('./.data'),
  DATABASE_URL: z.string().url().optional(),
  PG_PORT: port.optional(),
  HOST: z.string().default('0.0.0.0'),
  PORT: port.default(8443),
  METRICS_PORT: port.default(9464),
  METRICS_HOST: z.string().min(1).default('127.0.0.1'),
  METRICS_TOKEN: z.string().min(16, 'METRICS_TOKEN must be at least 16 characters').optional(),
  PUBLIC_BASE_URL: z.string().url().optional(),
  TLS_CERT_FILE: z.string().optional(),
  TLS_KEY_FILE: z.string().optional(),
  TRUST_PROXY: z.string().default('').transform(parseTrustProxy),
  ALLOW_PRIVATE_NETWORK_URLS: flag,
  FILES_SIGNING_SECRET: z.string().min(32).optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  STORAGE: z.enum(['local', 's3']).default('local'),
  S3_BUCKET: z.string().optional(),
  S3_REGION: z.string().default('us-east-1'),
  S3_ENDPOINT: z.string().url().optional(),
  S3_ACCESS_KEY_ID: z.string().optional(),
  S3_SECRET_ACCESS_KEY: z.string().optional(),
  S3_FORCE_PATH_STYLE: flag,
  WORKER_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(4),
  WORKER_LOCAL_QUEUE: z.coerce.number().int().min(0).max(1000).default(32),
  RATE_LIMIT_STORE: z.enum(['postgres', 'memory']).default('postgres'),
  RATE_LIMIT_TIERS: parsedBy(parseTierRateLimits),
  WORKER_COMPLETE_BATCH_MS: z.coerce.number().int().min(-1).max(10_000).default(0),
  ENGINE_ROUTES: z.string().optional(),
  LOCAL_ENGINE_DELAY_MS: z.coerce.number().int().min(0).max(600_000).default(0),
  UPSTREAM_POLL_MS: z.coerce.number().int().min(10).max(600_000).default(5000),
  UPSTREAM_MAX_RESULT_MB: z.coerce.number().int().min(1).max(10_000).default(500),
  UPSTREAM_WEBHOOKS: flag.default(true),
  UPSTREAM_POLL_MAX_MS: z.coerce.number().int().min(10).max(3_600_000).default(60_000),
  UPSTREAM_CALL_TIMEOUT_SECONDS: z.coerce.number().min(0.1).max(86_400).optional(),
  UPSTREAM_HOOKED_POLL_MS: z.coerce.number().int().min(0).max(3_600_000).default(300_000),
  OWNER_TOP_UP: flag.default(false),
  OWNER_TOP_UP_MAX_PER_PERIOD: z.coerce.number().int().min(1).max(1_000_000_000).default(10_000),
  AUDIT_RETENTION_DAYS: z.coerce.number({ message: 'must be a whole number of days from 1 to 36500' }).int().min(1).max(36_500).default(400),
  ENGINE_BREAKER_FAILURES: z.coerce.number().int().min(1).max(1000).default(5),
  ENGINE_BREAKER_COOLDOWN_SECONDS: z.coerce.number().int().min(1).max(86_400).default(60),
  GENERATION_TIMEOUT_SECONDS: z.coerce.number().int().min(5).max(86_400).default(1800),
  ENGINE_ATTEMPT_TIMEOUT_SECONDS: z.coerce.number().int().min(1).max(86_400).default(600),
  GENERATION_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(25).default(5),
  WORKER_HEARTBEAT_SECONDS: z.coerce.number().min(0.2).max(600).default(10),
  OTEL_EXPORTER_OTLP_ENDPOINT: z.string().url().optional(),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z.string().url().optional(),
  OTEL_SERVICE_NAME: z.string().min(1).max(200).default('adforge'),
  OTEL_BSP_SCHEDULE_DELAY: z.coerce.number().int().min(1).max(600_000).default(5000),
  SHUTDOWN_GRACE_SECONDS: z.coerce.number().min(1).max(3600).default(25),
  MAX_INPUT_VIDEO_MB: z.coerce.number().int().min(1).max(10_000).default(200),
  UPLOAD_TTL_HOURS: z.coerce.number().min(0.001).max(24 * 365).default(24),
  STORAGE_QUOTA_TIERS: parsedBy(parseStorageQuotas),
  STORAGE_METRIC_TEAMS: z.coerce.number().int().min(0).max(10_000).default(100),
  SPEECH_TIMEOUT_SECONDS: z.coerce.number().min(0.001).max(3600).default(120),
  SPEECH_CONCURRENCY: z.coerce.number().int().min(1).max(256).optional(),
  SPEECH_ENGINE: z.enum(['local', 'elevenlabs']).default('local'),
  ELEVENLABS_API_URL: z.string().url().default('https://api.elevenlabs.io'),
  ELEVENLABS_API_KEY: z.string().optional(),
  ELEVENLABS_VOICE_IDS: z.string().optional().transform(parseVoiceIds),
  ELEVENLABS_MODEL: z.string().max(100).default('eleven_multilingual_v2'),
  ELEVENLABS_STS_MODEL: z.string().max(100).default('eleven_multilingual_sts_v2'),
  AD_LIBRARY_SOURCE_URL: z.string().url().default('https://api.scrapecreators.com'),
  AD_LIBRARY_SOURCE_TOKEN: z.string().optional(),
  AD_LIBRARY_FRESH_HOURS: z.coerce.number().min(0).max(24 * 365).default(24),
  AD_LIBRARY_MAX_ADS: z.coerce.number().int().min(1).max(100_000).default(2000),
  AD_LIBRARY_MAX_MEDIA_MB: z.coerce.number().int().min(1).max(10_000).default(100),
  AD_LIBRARY_SOURCE_BACKOFF_MS: z.coerce.number().int().min(0).max(600_000).default(1000),
  AD_LIBRARY_SOURCE_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(20).default(4),
  RETENTION_DAYS: z.coerce.number({ message: 'must be a whole number of days from 1 to 36500' }).int().min(1).max(36_500).optional(),
  AD_MEDIA_RETENTION_DAYS: z.coerce.number({ message: 'must be a whole number of days from 1 to 36500' }).int().min(1).max(36_500).optional(),
  SUBSCRIPTIONS_PER_CONNECTION: z.coerce.number().int().min(1).max(10_000).default(25),
  SUBSCRIPTIONS_PER_KEY: z.coerce.number().int().min(1).max(100_000).default(100),
  SUBSCRIPTIONS_PER_TEAM: z.coerce.number().int().min(1).max(1_000_000).default(250),
  WS_UNAUTHENTICATED_PER_CLIENT: z.coerce.number().int().min(1).max(10_000).default(16),
  CAMPAIGN_MAX_ROWS: z.coerce.number().int().min(1).max(10_000_000).default(10_000),
  ...MEDIA_TOOL_VARIABLES,
});
/** The service's variables and every provider module's (src/adapters/engines/providers.ts). */
const envSchema = baseSchema.extend(providerVariables());
/** Every environment variable the configuration reads (docs/configuration.md, held to it by test/unit/docs-links.test.ts; the container files are checked against it). */
export const CONFIG_VARIABLES: readonly string[] = Object.keys(envSchema.shape);


export interface Config {
  dataDir: string;
  databaseUrl: string | undefined;
  /** Embedded Postgres port; undefined = the default, moved automatically when taken. */
  pgPort: number | undefined;
  host: string;
  port: number;
  /** Prometheus /metrics: its own plain-HTTP listener (0: none), and/or on the main port behind a bearer token. */
  metrics: { port: number; host: string; token: string | undefined };
  publicBaseUrl: string;
  tlsCertFile: string | undefined;
  tlsKeyFile: string | undefined;
  /**
   * Who may say where a request came from (X-Forwarded-For, X-Forwarded-Proto): false, nobody;
   * a number, that many proxy hops in front of us (TRUST_PROXY=true is 1); or the proxies' own
   * addresses and CIDR ranges.
   */
  trustProxy: false | number | string[];
  allowPrivateNetworkUrls: boolean;
  /** Team owners may add credits to their own limit from the dashboard (false, the default: only the operator's CLI). */
  /** Days a generation's stored files are kept (RETENTION_DAYS); undefined = forever. Owners may set fewer for their team. */
  retentionDays: number | undefined;
  /** Days our copies of scraped ad media are kept after the scrape that made them (AD_MEDIA_RETENTION_DAYS); undefined = forever. */
  adMediaRetentionDays: number | undefined;
  ownerTopUp: boolean;
  /** With ownerTopUp: how many credits a team's owners may add in one billing period, together. */
  ownerTopUpMaxPerPeriod: number;
  /** Days the audit log keeps a line (AUDIT_RETENTION_DAYS, 400 by default); a daily job purges older ones. */
  auditRetentionDays: number;
  /** Open GraphQL subscriptions allowed at once on one API node, and WebSockets not yet authenticated per client address. */
  subscriptions: { perConnection: number; perKey: number; perTeam: number; unauthenticatedPerClient: number };
  /** Rows one campaign may hold. */
  campaignMaxRows: number;
  /** The ffmpeg and ffprobe binaries every media tool run uses; undefined: the npm package's own. */
  mediaTools: MediaToolPaths;
  filesSigningSecret: string | undefined;
  logLevel: string;
  storage: 'local' | 's3';
  s3: {
    bucket: string;
    region: string;
    endpoint: string | undefined;
    accessKeyId: string;
    secretAccessKey: string;
    forcePathStyle: boolean;
  } | undefined;
  workerConcurrency: number;
  /** Jobs a worker process fetches and locks in one query (0: one per fetch); completions batched within this many ms (-1: each on its own). */
  workerLocalQueue: number;
  /** Per-key token buckets by tier (a key's own limit overrides its tier's). */
  rateLimits: Record<Tier, BucketRule>;
  /** Where the API keys' token buckets live: shared by every node (postgres) or each node's own (memory). */
  rateLimitStore: 'postgres' | 'memory';
  workerCompleteBatchMs: number;
  engineRoutes: string | undefined;
  localEngineDelayMs: number;
  /** Upstream providers: how often a job waiting upstream is polled, how large a result may be, and each provider's settings (its module's, undefined while its key is unset). */
  upstream: ProviderSettings & {
    pollMs: number;
    /** The longest wait between two looks at a job without a webhook (the age backoff's cap). */
    pollMaxMs: number;
    /** The safety net's pace for a job whose provider calls back (0: polled like any other). */
    hookedPollMs: number;
    maxResultBytes: number;
    /** UPSTREAM_CALL_TIMEOUT_SECONDS: a cap on every provider call's own timeout; unset, each call keeps its provider's. */
    callTimeoutCapMs: number | undefined;
    /** Where providers send their webhooks (`<base>/hooks/<provider>`): PUBLIC_BASE_URL when set; unset, polling alone. */
    callbackBaseUrl: string | undefined;
    /** Consecutive submit failures that open a provider's breaker, and how long it then rests. */
    breaker: { failures: number; cooldownSeconds: number };
  };
  /** A generation still processing after this long is failed and refunded by the sweeper. */
  generationTimeoutSeconds: number;
  engineAttemptTimeoutSeconds: number;
  maxInputVideoBytes: number;
  /** How long an upload stays usable; an unused one is deleted after it. */
  uploadTtlMs: number;
  /** Bytes a team of each tier may store (STORAGE_QUOTA_TIERS); a tier not named has no quota. */
  storageQuotas: Partial<Record<Tier, number>>;
  /** How many teams, the largest first, the storage gauge names (STORAGE_METRIC_TEAMS). */
  storageMetricTeams: number;
  /** Engine attempts per generation; transient failures are retried with backoff until then. */
  generationMaxAttempts: number;
  /** Workers beat this often; one silent for 4 beats is taken for dead and its jobs unlocked. */
  workerHeartbeatSeconds: number;
  /** OpenTelemetry traces over OTLP/HTTP; off unless an endpoint is set. */
  tracing: Readonly<TracingConfig>;
  /** On SIGTERM: how long open requests and running jobs get to finish before they are cut off (jobs released). */
  shutdownGraceSeconds: number;
  /** A voiceover's engine work (download excluded) past this fails the call with 502. */
  speechTimeoutSeconds: number;
  /** Voiceovers made at once by one API process; more wait their turn. Default: the core count. */
  speechConcurrency: number;
  /** Who makes voiceovers (and voice previews): eSpeak/ffmpeg here, or the ElevenLabs API. */
  speech:
    | { engine: 'local'; elevenlabs: undefined }
    | { engine: 'elevenlabs'; elevenlabs: ElevenLabsConfig };
  adLibrary: {
    /** The ad source (src/adapters/ad-library-source/meta-fields.ts says which format it speaks). */
    sourceUrl: string;
    sourceToken: string | undefined;
    /** A page scraped less than this long ago answers `existing`; an older one is scraped again. */
    freshHours: number;
    maxAds: number;
    maxMediaBytes: number;
    sourceBackoffMs: number;
    sourceMaxAttempts: number;
  };
}

export interface ElevenLabsConfig {
  /** e.g. https://api.elevenlabs.io, or anything speaking the same API. */
  apiUrl: string;
  apiKey: string;
  /** Catalogue voice UUID (lower case) -> the provider's voice id; an unmapped voice is refused. */
  voiceIds: Readonly<Record<string, string>>;
  /** Text-to-speech model when a request names none. */
  model: string;
  /** Speech-to-speech model (requests cannot name one). */
  stsModel: string;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Readonly<Config> {
  const parsed = envSchema.safeParse(stripEmpty(env));
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new Error(`invalid configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data as z.output<typeof baseSchema>;
  if ((e.TLS_CERT_FILE === undefined) !== (e.TLS_KEY_FILE === undefined)) {
    throw new Error('invalid configuration: TLS_CERT_FILE and TLS_KEY_FILE go together');
  }
  if (e.METRICS_PORT !== 0 && !isLoopbackHost(e.METRICS_HOST) && !e.METRICS_TOKEN) {
    throw new Error(
      `invalid configuration: METRICS_HOST=${e.METRICS_HOST} is not a loopback address, so the metrics listener needs METRICS_TOKEN ` +
        '(at least 16 random characters; scrapers send Authorization: Bearer <token>), or set METRICS_HOST=127.0.0.1, or METRICS_PORT=0',
    );
  }
  let s3: Config['s3'];
  if (e.STORAGE === 's3') {
    if (!e.S3_BUCKET || !e.S3_ACCESS_KEY_ID || !e.S3_SECRET_ACCESS_KEY) {
      throw new Error('invalid configuration: STORAGE=s3 needs S3_BUCKET, S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY');
    }
    s3 = {
      bucket: e.S3_BUCKET,
      region: e.S3_REGION,
      endpoint: e.S3_ENDPOINT,
      accessKeyId: e.S3_ACCESS_KEY_ID,
      secretAccessKey: e.S3_SECRET_ACCESS_KEY,
      forcePathStyle: e.S3_FORCE_PATH_STYLE,
    };
  }
  let speech: Config['speech'] = { engine: 'local', elevenlabs: undefined };
  if (e.SPEECH_ENGINE === 'elevenlabs') {
    if (!e.ELEVENLABS_API_KEY) throw new Error('invalid configuration: SPEECH_ENGINE=elevenlabs needs ELEVENLABS_API_KEY');
    speech = {
      engine: 'elevenlabs',
      elevenlabs: Object.freeze({
        apiUrl: e.ELEVENLABS_API_URL,
        apiKey: e.ELEVENLABS_API_KEY,
        voiceIds: e.ELEVENLABS_VOICE_IDS,
        model: e.ELEVENLABS_MODEL,
        stsModel: e.ELEVENLABS_STS_MODEL,
      }),
    };
  }
  return Object.freeze({
    dataDir: path.resolve(e.DATA_DIR),
    databaseUrl: e.DATABASE_URL,
    pgPort: e.PG_PORT,
    host: e.HOST,
    port: e.PORT,
    metrics: { port: e.METRICS_PORT, host: e.METRICS_HOST, token: e.METRICS_TOKEN },
    publicBaseUrl: (e.PUBLIC_BASE_URL ?? `https://localhost:${e.PORT}`).replace(/\/+$/, ''),
    tlsCertFile: e.TLS_CERT_FILE,
    tlsKeyFile: e.TLS_KEY_FILE,
    trustProxy: e.TRUST_PROXY,
    allowPrivateNetworkUrls: e.ALLOW_PRIVATE_NETWORK_URLS,
    ownerTopUp: e.OWNER_TOP_UP,
    retentionDays: e.RETENTION_DAYS,
    adMediaRetentionDays: e.AD_MEDIA_RETENTION_DAYS,
    subscriptions: Object.freeze({
      perConnection: e.SUBSCRIPTIONS_PER_CONNECTION,
      perKey: e.SUBSCRIPTIONS_PER_KEY,
      perTeam: e.SUBSCRIPTIONS_PER_TEAM,
      unauthenticatedPerClient: e.WS_UNAUTHENTICATED_PER_CLIENT,
    }),
    campaignMaxRows: e.CAMPAIGN_MAX_ROWS,
    mediaTools: mediaToolPaths(e),
    ownerTopUpMaxPerPeriod: e.OWNER_TOP_UP_MAX_PER_PERIOD,
    auditRetentionDays: e.AUDIT_RETENTION_DAYS,
    filesSigningSecret: e.FILES_SIGNING_SECRET,
    logLevel: e.LOG_LEVEL,
    storage: e.STORAGE,
    s3,
    workerConcurrency: e.WORKER_CONCURRENCY,
    workerLocalQueue: e.WORKER_LOCAL_QUEUE,
    rateLimits: e.RATE_LIMIT_TIERS,
    rateLimitStore: e.RATE_LIMIT_STORE,
    workerCompleteBatchMs: e.WORKER_COMPLETE_BATCH_MS,
    engineRoutes: e.ENGINE_ROUTES,
    localEngineDelayMs: e.LOCAL_ENGINE_DELAY_MS,
    upstream: Object.freeze({
      pollMs: e.UPSTREAM_POLL_MS,
      pollMaxMs: e.UPSTREAM_POLL_MAX_MS,
      hookedPollMs: e.UPSTREAM_HOOKED_POLL_MS,
      maxResultBytes: e.UPSTREAM_MAX_RESULT_MB * 1024 * 1024,
      callTimeoutCapMs: e.UPSTREAM_CALL_TIMEOUT_SECONDS === undefined ? undefined : Math.round(e.UPSTREAM_CALL_TIMEOUT_SECONDS * 1000),
      callbackBaseUrl: e.PUBLIC_BASE_URL && e.UPSTREAM_WEBHOOKS ? e.PUBLIC_BASE_URL.replace(/\/+$/, '') : undefined,
      breaker: Object.freeze({ failures: e.ENGINE_BREAKER_FAILURES, cooldownSeconds: e.ENGINE_BREAKER_COOLDOWN_SECONDS }),
      ...providerSettings(parsed.data),
    }),
    generationTimeoutSeconds: e.GENERATION_TIMEOUT_SECONDS,
    engineAttemptTimeoutSeconds: e.ENGINE_ATTEMPT_TIMEOUT_SECONDS,
    maxInputVideoBytes: e.MAX_INPUT_VIDEO_MB * 1024 * 1024,
    uploadTtlMs: e.UPLOAD_TTL_HOURS * 3600 * 1000,
    storageQuotas: e.STORAGE_QUOTA_TIERS,
    storageMetricTeams: e.STORAGE_METRIC_TEAMS,
    generationMaxAttempts: e.GENERATION_MAX_ATTEMPTS,
    workerHeartbeatSeconds: e.WORKER_HEARTBEAT_SECONDS,
    shutdownGraceSeconds: e.SHUTDOWN_GRACE_SECONDS,
    tracing: Object.freeze({
      // The signal's own endpoint is used as it is; the general one gets the traces path (the OTLP exporter spec).
      tracesUrl: e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? (e.OTEL_EXPORTER_OTLP_ENDPOINT ? `${e.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, '')}/v1/traces` : undefined),
      serviceName: e.OTEL_SERVICE_NAME,
      scheduleDelayMs: e.OTEL_BSP_SCHEDULE_DELAY,
    }),
    speechTimeoutSeconds: e.SPEECH_TIMEOUT_SECONDS,
    speechConcurrency: e.SPEECH_CONCURRENCY ?? os.availableParallelism(),
    speech: Object.freeze(speech),
    adLibrary: Object.freeze({
      sourceUrl: e.AD_LIBRARY_SOURCE_URL,
      sourceToken: e.AD_LIBRARY_SOURCE_TOKEN,
      freshHours: e.AD_LIBRARY_FRESH_HOURS,
      maxAds: e.AD_LIBRARY_MAX_ADS,
      maxMediaBytes: e.AD_LIBRARY_MAX_MEDIA_MB * 1024 * 1024,
      sourceBackoffMs: e.AD_LIBRARY_SOURCE_BACKOFF_MS,
      sourceMaxAttempts: e.AD_LIBRARY_SOURCE_MAX_ATTEMPTS,
    }),
  });
}

const CATALOGUE_IDS = new Set(VOICES.map((v) => v.id.toLowerCase()));
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** ElevenLabs voice ids are short alphanumeric strings; they go into a URL path. */
const PROVIDER_VOICE_ID = /^[A-Za-z0-9_-]{1,100}$/;

/**
 * ELEVENLABS_VOICE_IDS: `uuid=providerId,uuid=providerId` (spaces around entries ignored). Each
 * uuid must be a catalogue voice and appear once; a malformed entry is a configuration error.
 */
function parseVoiceIds(raw: string | undefined, ctx: z.RefinementCtx<string | undefined>): Readonly<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const entry of (raw ?? '').split(',').map((s) => s.trim()).filter(Boolean)) {
    const eq = entry.indexOf('=');
    const uuid = (eq < 0 ? entry : entry.slice(0, eq)).trim().toLowerCase();
    const providerId = eq < 0 ? '' : entry.slice(eq + 1).trim();
    const problem =
      eq < 0 || !providerId ? `"${entry}" is not uuid=providerVoiceId`
      : !UUID.test(uuid) ? `"${uuid}" is not a UUID`
      : !CATALOGUE_IDS.has(uuid) ? `${uuid} is not a catalogue voice`
      : !PROVIDER_VOICE_ID.test(providerId) ? `the provider voice id for ${uuid} must be letters, digits, "_" or "-"`
      : uuid in out ? `${uuid} is mapped twice`
      : undefined;
    if (problem) {
      ctx.addIssue({ code: 'custom', message: problem });
      return z.NEVER;
    }
    out[uuid] = providerId;
  }
  return Object.freeze(out);
}

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/** Only this machine can reach it: 127.0.0.0/8, ::1 (IPv4-mapped too) or `localhost`. Any other name may resolve anywhere. */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  if (h === 'localhost') return true;
  const family = isIP(h);
  return family !== 0 && LOOPBACK.check(h, family === 6 ? 'ipv6' : 'ipv4');
}

/** An exported-but-empty variable means "unset", as shells and .env files tend to produce. */
function stripEmpty(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined && v !== '') out[k] = v;
  return out;
}
