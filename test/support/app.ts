import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { Agent, request } from 'undici';
import { buildApp, type App } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { startHttpServer, type HttpServer } from '../../src/http/server.ts';
import { loadTls } from '../../src/http/tls.ts';
import { createLogger } from '../../src/log.ts';
import { startWorker } from '../../src/worker.ts';
import { checkAnswer } from './openapi-check.ts';
import { cloneTemplateDatabase } from './database.ts';
import { freePort } from './net.ts';
import { spawnCli, type LongRunning } from './cli-run.ts';

/** Buckets no test empties, except those that set their own. */
export const UNLIMITED_RATE = 'free=1000000:1000000,starter=1000000:1000000,pro=1000000:1000000,business=1000000:1000000';

/**
 * Tests poll their fakes every few ms and most fakes send no webhook: providers' poll budgets are
 * wide and a job with a webhook is polled like any other, unless a test sets its own (the budget
 * and webhook tests do: test/e2e/upstream-poll-budget.test.ts).
 */
export const TEST_POLLING: Record<string, string> = {
  UPSTREAM_HOOKED_POLL_MS: '0',
  ...Object.fromEntries(['FAL', 'HEYGEN', 'SYNC', 'GEMINI', 'OPENAI', 'SUBMAGIC', 'COMFYUI'].map((p) => [`${p}_POLL_BUDGET`, '1000/1'])),
};

export interface ApiResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: any;
  text: string;
}

export interface TestService {
  app: App;
  http: HttpServer;
  baseUrl: string;
  port: number;
  dataDir: string;
  databaseUrl: string;
  logLines: string[];
  /** A request over real TLS, the server's certificate checked against its own CA. */
  api: (method: string, path: string, opts?: { key?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> }) => Promise<ApiResponse>;
  fetchUrl: (url: string) => Promise<{ status: number; bytes: Buffer; headers: Record<string, string | string[] | undefined> }>;
  team: (opts?: { tier?: string; credits?: number; name?: string }) => Promise<{ teamId: string; key: string; keyId: string; webhookSecret: string }>;
  close: () => Promise<void>;
}

type Api = TestService['api'];

/** Requests to one node over real TLS, each answer checked against the OpenAPI document. */
export function apiClient(baseUrl: string, dispatcher: Agent): Api {
  return async (method, p, opts = {}) => {
    const headers: Record<string, string> = { ...(opts.headers ?? {}) };
    if (opts.key) headers.authorization = `Bearer ${opts.key}`;
    let body: string | undefined = opts.rawBody;
    if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await request(`${baseUrl}${p}`, { method: method as 'GET', headers, body, dispatcher });
    const text = await res.body.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON: keep the text
    }
    checkAnswer(method, p, res.statusCode, parsed);
    return { status: res.statusCode, headers: res.headers, body: parsed, text };
  };
}

/** Polls GET /generations/{id} until it leaves `processing`. */
export async function waitForGeneration(svc: TestService, key: string, id: string, timeoutMs = 60_000): Promise<any> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const res = await svc.api('GET', `/api/v1/generations/${id}`, { key });
    if (res.status !== 200) throw new Error(`GET /generations/${id} answered ${res.status}: ${res.text}`);
    if (res.body.status !== 'processing') return res.body;
    if (Date.now() > until) throw new Error(`generation ${id} still processing after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

export async function startTestService(
  env: Record<string, string> = {},
  opts: {
    worker?: boolean;
    databaseUrl?: (url: string) => Promise<string>;
    allowRetired?: boolean;
    /** The service's polling as configured (providers' own budgets, the 5-minute safety net), not TEST_POLLING's. */
    productionPolling?: boolean;
  } = {},
): Promise<TestService> {
  const database = await cloneTemplateDatabase();
  // The service may reach its database another way (through a proxy a test can cut).
  const serviceDatabaseUrl = opts.databaseUrl ? await opts.databaseUrl(database.url) : database.url;
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'adforge-test-data-'));
  const port = await freePort();
  const config = loadConfig({
    DATABASE_URL: serviceDatabaseUrl,
    DATA_DIR: dataDir,
    HOST: '127.0.0.1',
    PORT: String(port),
    PUBLIC_BASE_URL: `https://127.0.0.1:${port}`,
    ALLOW_PRIVATE_NETWORK_URLS: 'true',
    // Tests send bursts no key of a real team would; test/e2e/rate-limits.test.ts sets its own.
    RATE_LIMIT_TIERS: UNLIMITED_RATE,
    METRICS_PORT: '0',
    ...(opts.productionPolling ? {} : TEST_POLLING),
    ...env,
  });
  const logLines: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      logLines.push(String(chunk));
      cb();
    },
  });
  const log = createLogger('info', sink);
  const app = await buildApp(config, log, opts.allowRetired ? { allowRetired: true } : {});
  const http = await startHttpServer(app);
  const worker = opts.worker ? await startWorker(app) : undefined;
  const tls = await loadTls(config);
  const dispatcher = new Agent({ connect: { ca: tls.cert } });
  const baseUrl = `https://127.0.0.1:${http.port}`;

  const api = apiClient(baseUrl, dispatcher);

  const fetchUrl: TestService['fetchUrl'] = async (url) => {
    const res = await request(url, { dispatcher });
    return { status: res.statusCode, headers: res.headers, bytes: Buffer.from(await res.body.arrayBuffer()) };
  };

  const team: TestService['team'] = async (opts = {}) => {
    const t = await app.services.teams.createTeam({
      name: opts.name ?? 'Test team',
      tier: opts.tier ?? 'starter',
      credits_limit: opts.credits ?? 1000,
    });
    const k = await app.services.teams.createKey(t.id);
    return { teamId: t.id, key: k.key, keyId: k.id, webhookSecret: k.webhook_secret };
  };

  return {
    app,
    http,
    baseUrl,
    port: http.port,
    dataDir,
    databaseUrl: database.url,
    logLines,
    api,
    fetchUrl,
    team,
    close: async () => {
      await http.close();
      await worker?.stop();
      await dispatcher.close();
      await app.close();
      await database.drop();
      await fs.rm(dataDir, { recursive: true, force: true });
    },
  };
}

export interface ServeNode extends LongRunning {
  port: number;
  baseUrl: string;
  api: Api;
  /** Its own connections (a test may close them to watch a drain). */
  dispatcher: Agent;
}

/** A separate `adforge serve` process (an API node) on the service's database and files, ready to answer. */
export async function spawnServe(svc: Pick<TestService, 'databaseUrl' | 'dataDir'>, env: Record<string, string> = {}): Promise<ServeNode> {
  const port = await freePort();
  const node = spawnCli(['serve'], {
    DATABASE_URL: svc.databaseUrl,
    DATA_DIR: svc.dataDir,
    HOST: '127.0.0.1',
    PORT: String(port),
    PUBLIC_BASE_URL: `https://127.0.0.1:${port}`,
    ALLOW_PRIVATE_NETWORK_URLS: 'true',
    RATE_LIMIT_TIERS: UNLIMITED_RATE,
    LOG_LEVEL: 'warn',
    ...TEST_POLLING,
    ...env,
  });
  await node.waitForStdout(/adforge is running/, 30_000);
  const tls = await loadTls({ dataDir: svc.dataDir, tlsCertFile: undefined, tlsKeyFile: undefined });
  const dispatcher = new Agent({ connect: { ca: tls.cert } });
  const baseUrl = `https://127.0.0.1:${port}`;
  return { ...node, port, baseUrl, dispatcher, api: apiClient(baseUrl, dispatcher) };
}

/** A separate `adforge worker` process on the service's database and files, beating fast so a killed one is noticed quickly. */
export function spawnWorker(svc: Pick<TestService, 'databaseUrl' | 'dataDir'>, env: Record<string, string> = {}): LongRunning {
  return spawnCli(['worker'], {
    DATABASE_URL: svc.databaseUrl,
    DATA_DIR: svc.dataDir,
    ALLOW_PRIVATE_NETWORK_URLS: 'true',
    WORKER_HEARTBEAT_SECONDS: '0.5',
    LOG_LEVEL: 'warn',
    ...TEST_POLLING,
    ...env,
  });
}
