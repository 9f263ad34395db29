// `npm run bench`: create throughput and p50/p99 latency of POST /api/v1/images/text-to-image at a
// fixed concurrency against the in-process HTTPS service on a fresh embedded PostgreSQL, compared
// with the ceiling: the very same SQL (captured from one real API create) replayed straight
// through `pg` at the same concurrency, on a pool of the app's size. See bench/README.md.
//
// Knobs (environment): BENCH_REQUESTS (20000), BENCH_SECONDS (60), BENCH_WARMUP (2000),
// BENCH_CONCURRENCY (32), BENCH_TEAMS (64), BENCH_EXTRAS (1: also run the analysis rows),
// BENCH_EXTRA_REQUESTS (5000), BENCH_EXTRA_SECONDS (15), BENCH_EXTRA_WARMUP (1000),
// BENCH_MAX_SECONDS (540: hard stop, cleans up and exits 2).
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { buildApp, type App } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { startEmbeddedPostgres, type EmbeddedHandle } from '../src/db/embedded.ts';
import { createDb, createPool } from '../src/db/pool.ts';
import { digestApiKey } from '../src/domain/api-keys.ts';
import { startHttpServer, type HttpServer } from '../src/http/server.ts';
import { loadTls } from '../src/http/tls.ts';
import { createLogger } from '../src/log.ts';
import { freePort } from '../src/db/ports.ts';
import { createAuthService } from '../src/services/auth.ts';
import { httpLoad, type LoadJob } from './http-load.ts';
import { cpuDelta, machineBusyMs, postgresCpuMs } from './support/cpu.ts';
import { createLegacyCreator } from './legacy-create.ts';
import { CREATE_BODY, CREATE_PATH, GRAPHQL_CREATE_BODY } from './support/create-request.ts';

const num = (name: string, dflt: number) => {
  const v = process.env[name];
  const n = v === undefined || v === '' ? dflt : Number(v);
  if (!Number.isFinite(n) || n < 0) throw new Error(`${name} must be a non-negative number`);
  return n;
};
const REQUESTS = num('BENCH_REQUESTS', 20_000);
const SECONDS = num('BENCH_SECONDS', 60);
const WARMUP = num('BENCH_WARMUP', 2_000);
const CONCURRENCY = num('BENCH_CONCURRENCY', 32);
const TEAMS = num('BENCH_TEAMS', 64);
const EXTRAS = num('BENCH_EXTRAS', 1) !== 0;
const EXTRA_REQUESTS = num('BENCH_EXTRA_REQUESTS', 5_000);
const EXTRA_SECONDS = num('BENCH_EXTRA_SECONDS', 15);
const EXTRA_WARMUP = num('BENCH_EXTRA_WARMUP', 1_000);
// Rounds of every run, one after another: ratios are taken within a round and their median is
// reported, so a slow spell of this shared machine moves both sides of a ratio, not just one.
const ROUNDS = num('BENCH_ROUNDS', 1);
const MAX_SECONDS = num('BENCH_MAX_SECONDS', 540 * ROUNDS);
const CREDITS = 10_000_000;
const PATH = CREATE_PATH;
const BODY = CREATE_BODY;
const GRAPHQL_BODY = GRAPHQL_CREATE_BODY;

interface TeamKey {
  teamId: string;
  keyId: string;
  key: string;
  digest: Buffer;
}

interface Run {
  label: string;
  done: number;
  errors: number;
  errorSamples: string[];
  elapsedMs: number;
  rps: number;
  p50: number;
  p99: number;
  /** CPU per request, µs: the whole node process (server + load generator thread), the load thread alone, PostgreSQL. */
  nodeUsPerReq: number;
  loadUsPerReq: number;
  pgUsPerReq: number;
  /** Of which in the kernel (system time): node process, PostgreSQL. */
  nodeSysUsPerReq: number;
  pgSysUsPerReq: number;
  /** Mean number of callers queued in the pool (pg.Pool waitingCount), sampled every 10 ms. */
  poolWaiting: number;
  /** CPU used on the machine by anything but this process and this cluster, in cores (others' work on a shared box). */
  otherCores: number;
  /** CPU the hypervisor gave to others (steal), in cores. */
  stealCores: number;
}

// ---------------------------------------------------------------------------------------------
// Measurement helpers

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!;
}

interface Probe {
  postmasterPid: number;
}

/** CPU the rest of the machine used over `ms` milliseconds of (our) idleness, in cores. */
async function otherLoad(probe: Probe, ms: number): Promise<number> {
  const pg0 = await postgresCpuMs(probe.postmasterPid);
  const node0 = process.cpuUsage();
  const busy0 = (await machineBusyMs()).busy;
  await new Promise((r) => setTimeout(r, ms));
  const busy = (await machineBusyMs()).busy - busy0;
  const node = process.cpuUsage(node0);
  const mine = (node.user + node.system) / 1000 + cpuDelta(pg0, await postgresCpuMs(probe.postmasterPid));
  return Math.max(0, busy - mine) / ms;
}

/** Waits (at most ~3 s) for the others on a shared machine to use less than half a core. */
async function quietMachine(probe: Probe): Promise<void> {
  for (let i = 0; i < 4; i++) {
    const other = await otherLoad(probe, 750);
    if (!(other > 0.5)) return;
    if (i === 0) process.stdout.write(`  (waiting for a quieter machine: others use ${other.toFixed(1)} cores)\n`);
  }
}

/** Runs `body` while sampling CPU and pool queueing; `body` reports requests, latencies and its own thread's CPU. */
async function measured(
  label: string,
  probe: Probe,
  pool: pg.Pool,
  body: () => Promise<{ done: number; errors: number; errorSamples: string[]; elapsedMs: number; latenciesMs: Float64Array; loadCpuMs: number }>,
): Promise<Run> {
  let samples = 0;
  let waiting = 0;
  const sampler = setInterval(() => {
    samples++;
    waiting += pool.waitingCount;
  }, 10);
  const pg0 = await postgresCpuMs(probe.postmasterPid);
  const node0 = process.cpuUsage();
  const m0 = await machineBusyMs();
  const r = await body();
  const m1 = await machineBusyMs();
  const busy = m1.busy - m0.busy;
  const node = process.cpuUsage(node0);
  const pg1 = await postgresCpuMs(probe.postmasterPid);
  const pgMs = cpuDelta(pg0, pg1);
  const pgSysMs = cpuDelta(pg0, pg1, 1);
  clearInterval(sampler);
  const sorted = r.latenciesMs.slice().sort();
  const ok = Math.max(1, r.done);
  const nodeMs = (node.user + node.system) / 1000;
  return {
    label,
    done: r.done,
    errors: r.errors,
    errorSamples: r.errorSamples,
    elapsedMs: r.elapsedMs,
    rps: (r.done / r.elapsedMs) * 1000,
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
    nodeUsPerReq: (nodeMs * 1000) / ok,
    loadUsPerReq: (r.loadCpuMs * 1000) / ok,
    pgUsPerReq: (pgMs * 1000) / ok,
    nodeSysUsPerReq: node.system / ok,
    pgSysUsPerReq: (pgSysMs * 1000) / ok,
    poolWaiting: samples ? waiting / samples : 0,
    otherCores: Math.max(0, busy - nodeMs - pgMs) / r.elapsedMs,
    stealCores: (m1.steal - m0.steal) / r.elapsedMs,
  };
}

/** `concurrency` loops in this thread, each calling `one(i)` until `requests` were started or time is up. */
async function runConcurrent(requests: number, seconds: number, one: (i: number) => Promise<void>) {
  const latencies = new Float64Array(requests);
  const errorSamples: string[] = [];
  let next = 0;
  let done = 0;
  let errors = 0;
  const start = performance.now();
  const deadline = start + seconds * 1000;
  async function loop(): Promise<void> {
    for (;;) {
      if (next >= requests || performance.now() >= deadline) return;
      const i = next++;
      const t0 = performance.now();
      try {
        await one(i);
      } catch (e) {
        errors++;
        if (errorSamples.length < 5) errorSamples.push(String((e as Error)?.message ?? e));
      }
      latencies[done++] = performance.now() - t0;
    }
  }
  await Promise.all(Array.from({ length: CONCURRENCY }, loop));
  const elapsedMs = performance.now() - start;
  // The loops share this thread with pg (and the services): no separate load-generator CPU to report.
  return { done, errors, errorSamples, elapsedMs, latenciesMs: latencies.slice(0, done), loadCpuMs: 0 };
}

// ---------------------------------------------------------------------------------------------
// Capturing the SQL of one API create, and replaying it

interface CapturedQuery {
  /** Which pool checkout ran it: queries of one checkout are replayed on one connection, in order. */
  checkout: number;
  text: string;
  values: unknown[] | undefined;
  /** Set when the app sent it as a named (prepared) statement: the replay does the same. */
  name: string | undefined;
  firstRow: Record<string, unknown> | undefined;
}

/** Records every statement the app's pool sends while `send` runs (nothing else may run meanwhile). */
async function captureStatements(pool: pg.Pool, send: () => Promise<void>): Promise<CapturedQuery[]> {
  const captured: CapturedQuery[] = [];
  const checkoutOf = new WeakMap<object, number>();
  let checkouts = 0;
  const onAcquire = (client: pg.PoolClient) => checkoutOf.set(client, checkouts++);
  pool.on('acquire', onAcquire);
  const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = proto.query;
  proto.query = function (this: object, ...args: unknown[]) {
    const result = original.apply(this, args);
    const config = (typeof args[0] === 'object' && args[0] !== null ? args[0] : undefined) as { text?: unknown; values?: unknown; name?: unknown } | undefined;
    const text = typeof args[0] === 'string' ? args[0] : typeof config?.text === 'string' ? config.text : undefined;
    if (text !== undefined) {
      const values = config ? config.values : args[1];
      const rec: CapturedQuery = {
        checkout: checkoutOf.get(this) ?? -1,
        text,
        values: Array.isArray(values) ? [...(values as unknown[])] : undefined,
        name: typeof config?.name === 'string' ? config.name : undefined,
        firstRow: undefined,
      };
      captured.push(rec);
      if (result && typeof (result as Promise<unknown>).then === 'function') {
        (result as Promise<{ rows?: Record<string, unknown>[] }>).then(
          (r) => (rec.firstRow = r?.rows?.[0]),
          () => {},
        );
      }
    }
    return result;
  };
  try {
    await send();
  } finally {
    proto.query = original;
    pool.off('acquire', onAcquire);
  }
  return captured;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Replays the captured statements for another team/key: the captured team id, key id and key
 * digest are replaced by the new ones, ids the database returned (the generation id) by the ids
 * it returns now, timestamps keep their offset from "now". Same texts, same parameter types,
 * same protocol (pg's simple query for parameterless `begin`/`commit`, extended otherwise; named
 * statements stay named), same pool checkouts (the auth lookup on one, the transaction on another).
 */
function makeReplayer(captured: CapturedQuery[], origin: TeamKey, capturedAt: number) {
  const groups = new Map<number, CapturedQuery[]>();
  for (const q of captured) groups.set(q.checkout, [...(groups.get(q.checkout) ?? []), q]);
  const ordered = [...groups.entries()].sort(([a], [b]) => a - b).map(([, qs]) => qs);
  return async function replay(pool: pg.Pool, t: TeamKey): Promise<void> {
    const subst = new Map<string, string>([
      [origin.teamId, t.teamId],
      [origin.keyId, t.keyId],
    ]);
    const map = (v: unknown): unknown => {
      // An id the app chose for the new row (the generation's): a fresh one on every replay.
      if (typeof v === 'string' && UUID.test(v) && !subst.has(v)) subst.set(v, randomUUID());
      if (typeof v === 'string') {
        let s = v;
        for (const [from, to] of subst) if (s.includes(from)) s = s.replaceAll(from, to);
        return s;
      }
      if (Buffer.isBuffer(v)) return v.equals(origin.digest) ? t.digest : v;
      if (v instanceof Date) return new Date(Date.now() + (v.getTime() - capturedAt));
      return v;
    };
    for (const group of ordered) {
      const client = await pool.connect();
      let broken: Error | undefined;
      try {
        for (const q of group) {
          const values = q.values?.map(map);
          const res = q.name ? await client.query({ name: q.name, text: q.text, values: values ?? [] }) : await client.query(q.text, values);
          const row = res.rows[0] as Record<string, unknown> | undefined;
          if (q.firstRow) {
            if (!row) throw new Error(`replayed statement returned no row: ${q.text.slice(0, 80)}`);
            for (const [k, v] of Object.entries(q.firstRow)) {
              const now = row[k];
              if (typeof v === 'string' && UUID.test(v) && typeof now === 'string' && v !== now && !subst.has(v)) subst.set(v, now);
            }
          }
        }
      } catch (e) {
        broken = e as Error;
        throw e;
      } finally {
        client.release(broken);
      }
    }
  };
}

// ---------------------------------------------------------------------------------------------

async function machine(adminUrl: string): Promise<Record<string, string>> {
  const c = new pg.Client(adminUrl);
  await c.connect();
  try {
    const v = (await c.query<{ v: string }>('select version() as v')).rows[0]!.v;
    const settings = (
      await c.query<{ name: string; setting: string; unit: string | null }>(
        `select name, setting, unit from pg_settings where name in ('shared_buffers','synchronous_commit','fsync','wal_sync_method','max_connections','commit_delay')`,
      )
    ).rows
      .map((r) => `${r.name}=${r.setting}${r.unit ?? ''}`)
      .join(', ');
    const cpus = os.cpus();
    return {
      cpu: `${cpus[0]?.model ?? 'unknown'} × ${cpus.length}`,
      memory: `${(os.totalmem() / 2 ** 30).toFixed(1)} GiB`,
      os: `${os.type()} ${os.release()} ${os.arch()}`,
      node: process.version,
      postgres: v,
      'postgres settings': settings,
    };
  } finally {
    await c.end();
  }
}

function fmtRun(r: Run): string {
  return `${r.rps.toFixed(0).padStart(6)} req/s  p50 ${r.p50.toFixed(2).padStart(6)} ms  p99 ${r.p99.toFixed(2).padStart(7)} ms`;
}

function report(r: Run): void {
  const cpu =
    `CPU/req: node ${(r.nodeUsPerReq - r.loadUsPerReq).toFixed(0)} µs` +
    (r.loadUsPerReq ? ` + load generator ${r.loadUsPerReq.toFixed(0)} µs` : '') +
    ` (kernel ${r.nodeSysUsPerReq.toFixed(0)} µs), postgres ${r.pgUsPerReq.toFixed(0)} µs (kernel ${r.pgSysUsPerReq.toFixed(0)} µs); pool queue ${r.poolWaiting.toFixed(1)}; others on the box ${r.otherCores.toFixed(2)} cores, steal ${r.stealCores.toFixed(2)}`;
  console.log(`  ${r.label.padEnd(52)} ${fmtRun(r)}  [${r.done} req, ${(r.elapsedMs / 1000).toFixed(1)} s, ${r.errors} errors]`);
  console.log(`  ${''.padEnd(52)} ${cpu}`);
  for (const e of r.errorSamples) console.log(`    error: ${e}`);
}

/** A run during which others (processes, or the VM's host: steal) took more than a quarter of a core. */
const DISTURBED = 0.25;
const disturbed = (r: Run) => r.otherCores + r.stealCores > DISTURBED;
const mark = (r: Run) => (disturbed(r) ? ' ⚠' : '');

const pairRow = (name: string, api: Run, ceiling: Run) =>
  `| ${name}${mark(api) || mark(ceiling)} | ${api.rps.toFixed(0)} | ${api.p50.toFixed(1)} | ${api.p99.toFixed(1)} | ${ceiling.rps.toFixed(0)} | ${ceiling.p50.toFixed(1)} | ${ceiling.p99.toFixed(1)} | **${(api.rps / ceiling.rps).toFixed(2)}** |`;
const PAIR_HEAD =
  '| scenario | API req/s | API p50 ms | API p99 ms | ceiling req/s | ceiling p50 ms | ceiling p99 ms | API/ceiling |\n|---|---:|---:|---:|---:|---:|---:|---:|';

async function main(): Promise<void> {
  const t0 = Date.now();
  const tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'adforge-bench-'));
  // mkdtemp makes it 0700; as root the cluster runs as the postgres user, who must enter it.
  await fs.chmod(tmp, 0o755);
  let embedded: EmbeddedHandle | undefined;
  let app: App | undefined;
  const servers: HttpServer[] = [];
  let ceilingPool: pg.Pool | undefined;
  let legacyPool: pg.Pool | undefined;
  let admin: pg.Client | undefined;
  let cleaning: Promise<void> | undefined;
  const cleanup = () =>
    (cleaning ??= (async () => {
      for (const s of servers.reverse()) await s.close().catch(() => {});
      await admin?.end().catch(() => {});
      await ceilingPool?.end().catch(() => {});
      await legacyPool?.end().catch(() => {});
      await app?.close().catch(() => {});
      await embedded?.stop().catch(() => {});
      await fs.rm(tmp, { recursive: true, force: true }).catch(() => {});
    })());
  const abort = (why: string) => {
    console.error(`\nbench: ${why}; cleaning up`);
    void cleanup().finally(() => process.exit(2));
  };
  const watchdog = setTimeout(() => abort(`still running after ${MAX_SECONDS} s`), MAX_SECONDS * 1000);
  watchdog.unref();
  process.once('SIGINT', () => abort('interrupted'));
  process.once('SIGTERM', () => abort('terminated'));
  // Output piped into `head` and closed early must not kill the bench before it cleans up.
  process.stdout.on('error', () => {});

  try {
    const pgDir = path.join(tmp, 'pg');
    embedded = await startEmbeddedPostgres({ dir: pgDir });
    const probe: Probe = { postmasterPid: Number((await fs.readFile(path.join(pgDir, 'postmaster.pid'), 'utf8')).split('\n')[0]) };
    const setup = new pg.Client(embedded.url('postgres'));
    await setup.connect();
    await setup.query('create database adforge');
    await setup.end();
    const databaseUrl = embedded.url('adforge');
    const info = await machine(databaseUrl);

    const port = await freePort();
    const config = loadConfig({
      DATABASE_URL: databaseUrl,
      DATA_DIR: path.join(tmp, 'data'),
      HOST: '127.0.0.1',
      PORT: String(port),
      PUBLIC_BASE_URL: `https://127.0.0.1:${port}`,
      LOG_LEVEL: 'warn',
      // The bench is the flood a limit exists to refuse: measured without one.
      RATE_LIMIT_TIERS: 'starter=1000000:1000000,pro=1000000:1000000',
    });
    app = await buildApp(config, createLogger('warn')); // applies the migrations
    const a = app;
    const server = await startHttpServer(app);
    servers.push(server);
    const tls = await loadTls(config);
    const origin = `https://127.0.0.1:${server.port}`;
    const appPool = app.database.pool;
    const poolSize = appPool.options.max ?? 10;

    console.log(`adforge create benchmark, ${new Date().toISOString()}`);
    for (const [k, v] of Object.entries(info)) console.log(`  ${k}: ${v}`);
    console.log(
      `  concurrency ${CONCURRENCY}; ${REQUESTS} requests or ${SECONDS} s per run, whichever first; warm-up ${WARMUP}; ` +
        `${TEAMS} teams in the spread case; app pool ${poolSize} connections (the ceiling's pool too); no worker (jobs only queue)`,
    );

    const teams: TeamKey[] = [];
    for (let i = 0; i <= TEAMS; i++) {
      const t = await app.services.teams.createTeam({ name: `bench ${i}`, tier: 'starter', credits_limit: CREDITS });
      const k = await app.services.teams.createKey(t.id);
      teams.push({ teamId: t.id, keyId: k.id, key: k.key, digest: digestApiKey(k.key) });
    }
    const scenarios = [
      { name: 'one team', keys: [teams[0]!] },
      { name: `${TEAMS} teams, round-robin`, keys: teams.slice(1, TEAMS + 1) },
    ];

    /** One create through `serverOrigin`, its SQL recorded; returns a replayer of exactly that SQL. */
    const captureVia = async (serverOrigin: string, title: string, pool: pg.Pool = appPool) => {
      const who = teams[0]!;
      const capturedAt = Date.now();
      const captured = await captureStatements(pool, async () => {
        const r = await httpLoad({ origin: serverOrigin, path: PATH, ca: tls.cert, keys: [who.key], body: BODY, concurrency: 1, requests: 1, seconds: 30, expectStatus: 202 });
        if (r.errors) throw new Error(`the capture request failed: ${r.errorSamples.join('; ')}`);
      });
      const checkouts = new Set(captured.map((q) => q.checkout)).size;
      console.log(`\n${title}: ${captured.length} statements = ${captured.length} round trips, on ${checkouts} pool checkouts:`);
      for (const q of captured) console.log(`  [checkout ${q.checkout}]${q.name ? ' (named)' : ''} ${q.text.replace(/\s+/g, ' ').slice(0, 140)}`);
      const replay = makeReplayer(captured, who, capturedAt);
      return { captured, replay };
    };
    const current = await captureVia(origin, 'SQL of one API create (today)');

    // The path before issue 14 (bench/legacy-create.ts) behind the same HTTPS stack, on a plain pool
    // (no named statements) of the same size: the "before" of every ratio, measured in this run.
    legacyPool = new pg.Pool({ connectionString: databaseUrl, max: poolSize });
    legacyPool.on('error', () => {});
    const legacyDb = createDb(legacyPool);
    const beforeApp: App = {
      ...app,
      db: legacyDb,
      services: { ...app.services, auth: createAuthService({ db: legacyDb, config: app.config }), generationCreator: { ...app.services.generationCreator, ...createLegacyCreator({ db: legacyDb, config: app.config }) } },
    };
    const beforeServer = await startHttpServer(beforeApp, { port: 0, host: '127.0.0.1' });
    servers.push(beforeServer);
    const beforeOrigin = `https://127.0.0.1:${beforeServer.port}`;
    const legacy = await captureVia(beforeOrigin, 'SQL of one create before issue 14 (bench/legacy-create.ts)', legacyPool);

    ceilingPool = createPool(databaseUrl, poolSize);
    const cp = ceilingPool;
    admin = new pg.Client(databaseUrl);
    await admin.connect();
    const adm = admin;
    const count = async () => Number((await adm.query<{ n: number }>('select count(*)::int as n from generations')).rows[0]!.n);
    const settle = async () => {
      await adm.query('analyze');
      await adm.query('checkpoint');
      await quietMachine(probe);
    };
    const verify = async (label: string, before: number, run: Run) => {
      const rows = (await count()) - before;
      if (rows !== run.done - run.errors) {
        run.errors += Math.abs(rows - (run.done - run.errors));
        console.log(`  ! ${label}: ${rows} generations inserted for ${run.done - run.errors} successful creates`);
      }
    };

    const apiRun = async (
      label: string,
      keys: TeamKey[],
      requests: number,
      seconds: number,
      warmup: number,
      opts: { origin?: string; plain?: boolean; pool?: pg.Pool; idempotent?: boolean; graphql?: boolean } = {},
    ) => {
      const job = (n: number): LoadJob => ({
        origin: opts.origin ?? origin,
        path: opts.graphql ? '/graphql' : PATH,
        ca: opts.plain ? undefined : tls.cert,
        ...(opts.plain ? { headers: { 'x-forwarded-proto': 'https' } } : {}),
        keys: keys.map((k) => k.key),
        body: opts.graphql ? GRAPHQL_BODY : BODY,
        concurrency: CONCURRENCY,
        requests: n,
        seconds,
        expectStatus: opts.graphql ? 200 : 202,
        ...(opts.graphql ? { expectText: '"generation_id"' } : {}),
        idempotencyKeys: opts.idempotent ?? false,
      });
      await httpLoad(job(warmup));
      await settle();
      const before = await count();
      const run = await measured(label, probe, opts.pool ?? appPool, async () => {
        const r = await httpLoad(job(requests));
        return { ...r, loadCpuMs: r.cpuMs };
      });
      await verify(label, before, run);
      report(run);
      return run;
    };

    const inProcessRun = async (label: string, keys: TeamKey[], requests: number, seconds: number, warmup: number, pool: pg.Pool, one: (t: TeamKey) => Promise<void>) => {
      const go = (n: number) => runConcurrent(n, seconds, (i) => one(keys[i % keys.length]!));
      await go(warmup);
      await settle();
      const before = await count();
      const run = await measured(label, probe, pool, () => go(requests));
      await verify(label, before, run);
      report(run);
      return run;
    };

    const pairs: { name: string; scenario: string; api: Run; ceiling: Run; oldSql: Run; before: Run; idempotent: Run; graphql: Run }[] = [];
    console.log('\nMeasured runs (sequential; each after its own warm-up, ANALYZE and CHECKPOINT):');
    for (let round = 1; round <= ROUNDS; round++) {
      for (const s of scenarios) {
        const name = ROUNDS > 1 ? `${s.name}, round ${round}` : s.name;
        const before = await apiRun(`before issue 14: API (HTTPS) — ${name}`, s.keys, REQUESTS, SECONDS, WARMUP, { origin: beforeOrigin, pool: legacyPool });
        const api = await apiRun(`API (HTTPS) — ${name}`, s.keys, REQUESTS, SECONDS, WARMUP);
        const ceiling = await inProcessRun(`ceiling: same SQL via pg — ${name}`, s.keys, REQUESTS, SECONDS, WARMUP, cp, (t) => current.replay(cp, t));
        // Issue 31's yardstick: the old create's SQL (7 statements, unnamed) replayed raw the same way.
        const oldSql = await inProcessRun(`old create SQL via pg — ${name}`, s.keys, REQUESTS, SECONDS, WARMUP, legacyPool, (t) => legacy.replay(legacyPool!, t));
        const idempotent = await apiRun(`API (HTTPS) with Idempotency-Key — ${name}`, s.keys, REQUESTS, SECONDS, WARMUP, { idempotent: true });
        const graphql = await apiRun(`GraphQL createTextToImage (HTTPS) — ${name}`, s.keys, REQUESTS, SECONDS, WARMUP, { graphql: true });
        pairs.push({ name, scenario: s.name, api, ceiling, oldSql, before, idempotent, graphql });
      }
    }

    const extras: Run[] = [];
    if (EXTRAS) {
      // Where the API's time goes (64 teams): the same services without HTTP, and HTTP without TLS.
      const direct = async (t: TeamKey) => {
        const principal = await a.services.auth.authenticate(`Bearer ${t.key}`);
        const out = await a.services.generationCreator.create(principal, 'text-to-image', JSON.parse(BODY));
        if (out.status !== 202) throw new Error(`create answered ${out.status}`);
      };
      const plain = await startHttpServer({ ...app, config: Object.freeze({ ...app.config, trustProxy: 1 }) }, { port: 0, host: '127.0.0.1' });
      servers.push(plain);

      console.log(`\nAnalysis runs (${EXTRA_REQUESTS} requests or ${EXTRA_SECONDS} s each, warm-up ${EXTRA_WARMUP}):`);
      const spread = scenarios[1]!;
      extras.push(await inProcessRun(`services in-process, no HTTP — ${spread.name}`, spread.keys, EXTRA_REQUESTS, EXTRA_SECONDS, EXTRA_WARMUP, appPool, direct));
      extras.push(
        await apiRun(`API over plain HTTP, no TLS — ${spread.name}`, spread.keys, EXTRA_REQUESTS, EXTRA_SECONDS, EXTRA_WARMUP, {
          origin: `http://127.0.0.1:${plain.port}`,
          plain: true,
        }),
      );
    }

    console.log(`\nAPI vs ceiling, today's create (concurrency ${CONCURRENCY}):`);
    console.log(PAIR_HEAD);
    for (const p of pairs) console.log(pairRow(p.name, p.api, p.ceiling));
    console.log('\nREST create vs the old create SQL replayed raw through pg, same run (issue 31 target over 64 teams: >= 1.0; and >= 0.9 of its own SQL replayed raw):');
    console.log('| scenario | REST req/s | old SQL via pg req/s | **REST / old SQL** | own SQL via pg req/s | **REST / own SQL** |\n|---|---:|---:|---:|---:|---:|');
    for (const p of pairs) console.log(`| ${p.name} | ${p.api.rps.toFixed(0)}${mark(p.api)} | ${p.oldSql.rps.toFixed(0)}${mark(p.oldSql)} | **${(p.api.rps / p.oldSql.rps).toFixed(2)}** | ${p.ceiling.rps.toFixed(0)}${mark(p.ceiling)} | **${(p.api.rps / p.ceiling.rps).toFixed(2)}** |`);
    console.log('\nToday vs before issue 14, same run (targets: x2.5 one team, x1.5 over 64 teams):');
    console.log('| scenario | before req/s | before p99 ms | today req/s | today p99 ms | today / before |\n|---|---:|---:|---:|---:|---:|');
    for (const p of pairs) console.log(`| ${p.name} | ${p.before.rps.toFixed(0)}${mark(p.before)} | ${p.before.p99.toFixed(1)} | ${p.api.rps.toFixed(0)}${mark(p.api)} | ${p.api.p99.toFixed(1)} | **x${(p.api.rps / p.before.rps).toFixed(2)}** |`);
    console.log('\nIdempotent and GraphQL creates vs plain REST, same run (targets: idempotent >= 0.7, GraphQL >= 0.8):');
    console.log('| scenario | REST req/s | with Idempotency-Key req/s (p99 ms) | **idempotent / REST** | GraphQL req/s (p99 ms) | **GraphQL / REST** |\n|---|---:|---:|---:|---:|---:|');
    for (const p of pairs) {
      console.log(
        `| ${p.name} | ${p.api.rps.toFixed(0)}${mark(p.api)} | ${p.idempotent.rps.toFixed(0)}${mark(p.idempotent)} (${p.idempotent.p99.toFixed(1)}) | **${(p.idempotent.rps / p.api.rps).toFixed(2)}** | ${p.graphql.rps.toFixed(0)}${mark(p.graphql)} (${p.graphql.p99.toFixed(1)}) | **${(p.graphql.rps / p.api.rps).toFixed(2)}** |`,
      );
    }
    if (ROUNDS > 1) {
      const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;
      console.log(`\nMedian over ${ROUNDS} rounds (each ratio taken within its round):`);
      console.log('| scenario | today / before | today / ceiling | today / old SQL via pg | idempotent / REST | GraphQL / REST | REST p99 ms |\n|---|---:|---:|---:|---:|---:|---:|');
      for (const s of scenarios) {
        const ps = pairs.filter((p) => p.scenario === s.name);
        const m = (f: (p: (typeof ps)[number]) => number) => median(ps.map(f)).toFixed(2);
        console.log(`| ${s.name} | **x${m((p) => p.api.rps / p.before.rps)}** | **${m((p) => p.api.rps / p.ceiling.rps)}** | **${m((p) => p.api.rps / p.oldSql.rps)}** | **${m((p) => p.idempotent.rps / p.api.rps)}** | **${m((p) => p.graphql.rps / p.api.rps)}** | ${median(ps.map((p) => p.api.p99)).toFixed(1)} |`);
      }
    }
    {
      console.log('\nEvery run (CPU per request: node = this process minus the load generator thread):');
      console.log('| run | req/s | p50 ms | p99 ms | node µs/req | load gen µs/req | node+load gen: kernel µs/req | postgres µs/req (kernel) | pool queue | others, cores | steal, cores |');
      console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
      for (const r of [...pairs.flatMap((p) => [p.before, p.api, p.ceiling, p.oldSql, p.idempotent, p.graphql]), ...extras]) {
        console.log(
          `| ${r.label}${mark(r)} | ${r.rps.toFixed(0)} | ${r.p50.toFixed(1)} | ${r.p99.toFixed(1)} | ${(r.nodeUsPerReq - r.loadUsPerReq).toFixed(0)} | ${r.loadUsPerReq.toFixed(0)} | ${r.nodeSysUsPerReq.toFixed(0)} | ${r.pgUsPerReq.toFixed(0)} (${r.pgSysUsPerReq.toFixed(0)}) | ${r.poolWaiting.toFixed(1)} | ${r.otherCores.toFixed(2)} | ${r.stealCores.toFixed(2)} |`,
        );
      }
    }
    const all = [...pairs.flatMap((p) => [p.before, p.api, p.ceiling, p.oldSql, p.idempotent, p.graphql]), ...extras];
    const noisy = all.filter(disturbed).length;
    if (noisy) {
      console.log(
        `\n⚠ ${noisy} of ${all.length} runs were disturbed: other processes or the VM's host (steal) took more than ` +
          `${DISTURBED} cores meanwhile; their figures (and ratios) are not reliable. Re-run on a quiet machine.`,
      );
    }
    const errors = all.reduce((n, r) => n + r.errors, 0);
    console.log(`\n${errors} errors in total; ${((Date.now() - t0) / 1000).toFixed(0)} s in all`);
    if (errors) process.exitCode = 1;
  } finally {
    clearTimeout(watchdog);
    await cleanup();
  }
}

await main();
