// `npm run bench`: create throughput and p50/p99 latency of POST /api/v1/images/text-to-image at a
// fixed concurrency against the in-process HTTPS service on a fresh embedded PostgreSQL, compared
// with the ceiling: the very same SQL (captured from one real API create) replayed straight
// through `pg` at the same concurrency, on a pool of the app's size. See bench/README.md.
//
// Knobs (environment): BENCH_REQUESTS (20000), BENCH_SECONDS (60), BENCH_WARMUP (2000),
// BENCH_CONCURRENCY (32), BENCH_TEAMS (64), BENCH_EXTRAS (1: also run the analysis rows),
// BENCH_EXTRA_REQUESTS (8000), BENCH_EXTRA_SECONDS (20), BENCH_MAX_SECONDS (540: hard stop).
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import pg from 'pg';
import { buildApp, type App } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { startEmbeddedPostgres, type EmbeddedHandle } from '../src/db/embedded.ts';
import { createPool } from '../src/db/pool.ts';
import { digestApiKey } from '../src/domain/api-keys.ts';
import { startHttpServer, type HttpServer } from '../src/http/server.ts';
import { loadTls } from '../src/http/tls.ts';
import { createLogger } from '../src/log.ts';
import { freePort } from '../src/net/ports.ts';
import type { LoadJob, LoadResult } from './http-load.ts';

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
const EXTRA_REQUESTS = num('BENCH_EXTRA_REQUESTS', 8_000);
const EXTRA_SECONDS = num('BENCH_EXTRA_SECONDS', 20);
const MAX_SECONDS = num('BENCH_MAX_SECONDS', 540);
const CREDITS = 10_000_000;
const PATH = '/api/v1/images/text-to-image';
const BODY = JSON.stringify({ model: 'fast', prompt: 'bench', aspect_ratio: '1:1' });

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
  /** Mean number of callers queued in the pool (pg.Pool waitingCount), sampled every 10 ms. */
  poolWaiting: number;
}

// ---------------------------------------------------------------------------------------------
// Measurement helpers

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!;
}

const CLK_TCK = 100; // Linux USER_HZ

/** Total CPU (ms) of every `postgres` process: the embedded cluster is the only one on the box while we run. */
async function postgresCpuMs(): Promise<Map<number, number>> {
  const out = new Map<number, number>();
  let pids: string[];
  try {
    pids = (await fs.readdir('/proc')).filter((d) => /^\d+$/.test(d));
  } catch {
    return out;
  }
  await Promise.all(
    pids.map(async (pid) => {
      try {
        const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8');
        const close = stat.lastIndexOf(')');
        const comm = stat.slice(stat.indexOf('(') + 1, close);
        if (comm !== 'postgres') return;
        const f = stat.slice(close + 2).split(' ');
        out.set(Number(pid), ((Number(f[11]) + Number(f[12])) * 1000) / CLK_TCK);
      } catch {
        // gone
      }
    }),
  );
  return out;
}

function cpuDelta(before: Map<number, number>, after: Map<number, number>): number {
  let total = 0;
  for (const [pid, ms] of after) total += ms - (before.get(pid) ?? 0);
  return total;
}

/** Runs `body` while sampling CPU and pool queueing; `body` reports requests, latencies and its own thread's CPU. */
async function measured(
  label: string,
  pool: pg.Pool,
  body: () => Promise<{ done: number; errors: number; errorSamples: string[]; elapsedMs: number; latenciesMs: Float64Array; loadCpuMs: number }>,
): Promise<Run> {
  let samples = 0;
  let waiting = 0;
  const sampler = setInterval(() => {
    samples++;
    waiting += pool.waitingCount;
  }, 10);
  const pg0 = await postgresCpuMs();
  const node0 = process.cpuUsage();
  const r = await body();
  const node = process.cpuUsage(node0);
  const pgMs = cpuDelta(pg0, await postgresCpuMs());
  clearInterval(sampler);
  const sorted = r.latenciesMs.slice().sort();
  const ok = Math.max(1, r.done);
  return {
    label,
    done: r.done,
    errors: r.errors,
    errorSamples: r.errorSamples,
    elapsedMs: r.elapsedMs,
    rps: (r.done / r.elapsedMs) * 1000,
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
    nodeUsPerReq: ((node.user + node.system) / ok),
    loadUsPerReq: (r.loadCpuMs * 1000) / ok,
    pgUsPerReq: (pgMs * 1000) / ok,
    poolWaiting: samples ? waiting / samples : 0,
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

function httpLoad(job: LoadJob): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./http-load.ts', import.meta.url), { workerData: { kind: 'http-load', job } });
    let settled = false;
    worker.once('message', (m: { ok: true; result: LoadResult } | { ok: false; error: string }) => {
      settled = true;
      void worker.terminate();
      if (m.ok) resolve(m.result);
      else reject(new Error(`load generator failed: ${m.error}`));
    });
    worker.once('error', (e) => {
      settled = true;
      reject(e);
    });
    worker.once('exit', (code) => {
      if (!settled) reject(new Error(`load generator exited with code ${code}`));
    });
  });
}

// ---------------------------------------------------------------------------------------------
// Capturing the SQL of one API create, and replaying it

interface CapturedQuery {
  /** Which pool checkout ran it: queries of one checkout are replayed on one connection, in order. */
  checkout: number;
  text: string;
  values: unknown[] | undefined;
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
    if (typeof args[0] === 'string') {
      const rec: CapturedQuery = {
        checkout: checkoutOf.get(this) ?? -1,
        text: args[0],
        values: Array.isArray(args[1]) ? [...(args[1] as unknown[])] : undefined,
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
 * same protocol (pg's simple query for parameterless `begin`/`commit`, extended otherwise),
 * same pool checkouts (the auth lookup on one, the transaction on another).
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
          const res = await client.query(q.text, q.values?.map(map));
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

// The proposed shape (see bench/RESULTS.md): the debit, the generation, the ledger line, the links
// and the job in ONE statement, sent outside BEGIN/COMMIT (autocommit), after the auth lookup.
export const ONE_STATEMENT_CREATE = `with debit as (
  update teams set credits_used = credits_used + $3::int
  where id = $1::uuid and credits_used + $3::int <= credits_limit
  returning id
), generation as (
  insert into generations (team_id, api_key_id, operation, type, kind, params, credits, source_generation_id, deadline_at)
  select debit.id, $2::uuid, $4::text, $5::text, $6::text, $7::jsonb, $3::int, $8::uuid, $9::timestamptz from debit
  returning id, created_at
), ledger as (
  insert into credit_ledger (team_id, kind, amount, subject_type, subject_id)
  select $1::uuid, 'debit', $3::int, 'generation', generation.id from generation
), products as (
  insert into generation_products (generation_id, product_id)
  select generation.id, p from generation, unnest($10::uuid[]) as p
), avatars as (
  insert into generation_avatars (generation_id, avatar_id)
  select generation.id, a from generation, unnest($11::uuid[]) as a
)
select generation.id, generation.created_at
from generation
cross join lateral graphile_worker.add_job(
  identifier => $12::text,
  payload => json_build_object('generation_id', generation.id),
  max_attempts => $13::int,
  job_key => 'generation:' || generation.id
) as job`;

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
  const cpu = `CPU/req: node ${r.nodeUsPerReq.toFixed(0)} µs (load thread ${r.loadUsPerReq.toFixed(0)}), postgres ${r.pgUsPerReq.toFixed(0)} µs; pool queue ${r.poolWaiting.toFixed(1)}`;
  console.log(`  ${r.label.padEnd(44)} ${fmtRun(r)}  [${r.done} req, ${(r.elapsedMs / 1000).toFixed(1)} s, ${r.errors} errors]  ${cpu}`);
  for (const e of r.errorSamples) console.log(`    error: ${e}`);
}

async function main(): Promise<void> {
  const t0 = Date.now();
  const tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'adforge-bench-'));
  // mkdtemp makes it 0700; as root the cluster runs as the postgres user, who must enter it.
  await fs.chmod(tmp, 0o755);
  let embedded: EmbeddedHandle | undefined;
  let app: App | undefined;
  let server: HttpServer | undefined;
  let plainServer: HttpServer | undefined;
  let ceilingPool: pg.Pool | undefined;
  let cleaning: Promise<void> | undefined;
  const cleanup = () =>
    (cleaning ??= (async () => {
      await plainServer?.close().catch(() => {});
      await server?.close().catch(() => {});
      await ceilingPool?.end().catch(() => {});
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

  try {
    embedded = await startEmbeddedPostgres({ dir: path.join(tmp, 'pg') });
    const admin = new pg.Client(embedded.url('postgres'));
    await admin.connect();
    await admin.query('create database adforge');
    await admin.end();
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
    });
    const log = createLogger('warn');
    app = await buildApp(config, log); // migrates
    server = await startHttpServer(app);
    const tls = await loadTls(config);
    const origin = `https://127.0.0.1:${server.port}`;
    const appPool = app.database.pool;
    const poolSize = appPool.options.max ?? 10;

    console.log('adforge create benchmark');
    for (const [k, v] of Object.entries(info)) console.log(`  ${k}: ${v}`);
    console.log(
      `  concurrency ${CONCURRENCY}, ${REQUESTS} requests or ${SECONDS} s per run (first reached), warm-up ${WARMUP}, ` +
        `${TEAMS} teams for the spread case, app pool ${poolSize} connections, no worker (jobs only queue)`,
    );

    const teams: TeamKey[] = [];
    for (let i = 0; i <= TEAMS; i++) {
      const t = await app.services.teams.createTeam({ name: `bench ${i}`, tier: 'starter', credits_limit: CREDITS });
      const k = await app.services.teams.createKey(t.id);
      teams.push({ teamId: t.id, keyId: k.id, key: k.key, digest: digestApiKey(k.key) });
    }
    const solo = [teams[0]!];
    const spread = teams.slice(1, TEAMS + 1);

    // One API create, its SQL recorded.
    const origTeam = teams[0]!;
    const capturedAt = Date.now();
    const captured = await captureStatements(appPool, async () => {
      const r = await httpLoad({ origin, path: PATH, ca: tls.cert, keys: [origTeam.key], body: BODY, concurrency: 1, requests: 1, seconds: 30, expectStatus: 202 });
      if (r.errors) throw new Error(`the capture request failed: ${r.errorSamples.join('; ')}`);
    });
    console.log(`\nSQL of one API create (${captured.length} round trips, ${new Set(captured.map((q) => q.checkout)).size} pool checkouts):`);
    for (const q of captured) console.log(`  [checkout ${q.checkout}] ${q.text.replace(/\s+/g, ' ').slice(0, 150)}`);
    const replay = makeReplayer(captured, origTeam, capturedAt);

    ceilingPool = createPool(databaseUrl, poolSize);
    const cp = ceilingPool;
    const admin2 = new pg.Client(databaseUrl);
    await admin2.connect();
    const count = async () =>
      Number((await admin2.query<{ n: string }>('select count(*)::int as n from generations')).rows[0]!.n);
    const settle = async () => {
      await admin2.query('analyze');
      await admin2.query('checkpoint');
    };

    const apiRun = async (label: string, keys: TeamKey[], requests: number, seconds: number, opts: { origin?: string; plain?: boolean } = {}) => {
      const job = (n: number): LoadJob => ({
        origin: opts.origin ?? origin,
        path: PATH,
        ca: opts.plain ? undefined : tls.cert,
        ...(opts.plain ? { headers: { 'x-forwarded-proto': 'https' } } : {}),
        keys: keys.map((k) => k.key),
        body: BODY,
        concurrency: CONCURRENCY,
        requests: n,
        seconds,
        expectStatus: 202,
      });
      await httpLoad(job(Math.min(WARMUP, requests)));
      await settle();
      const before = await count();
      const run = await measured(label, appPool, async () => {
        const r = await httpLoad(job(requests));
        return { ...r, loadCpuMs: r.cpuMs };
      });
      const rows = (await count()) - before;
      if (rows !== run.done - run.errors) console.log(`  ! ${label}: ${rows} generations inserted for ${run.done - run.errors} successful requests`);
      report(run);
      return run;
    };

    const inProcessRun = async (label: string, keys: TeamKey[], requests: number, seconds: number, pool: pg.Pool, one: (t: TeamKey) => Promise<void>) => {
      const go = (n: number) => runConcurrent(n, seconds, (i) => one(keys[i % keys.length]!));
      await go(Math.min(WARMUP, requests));
      await settle();
      const before = await count();
      const run = await measured(label, pool, () => go(requests));
      const rows = (await count()) - before;
      if (rows !== run.done - run.errors) console.log(`  ! ${label}: ${rows} generations inserted for ${run.done - run.errors} successful creates`);
      report(run);
      return run;
    };

    const ceilingRun = (label: string, keys: TeamKey[], requests = REQUESTS, seconds = SECONDS) =>
      inProcessRun(label, keys, requests, seconds, cp, (t) => replay(cp, t));

    const scenarios = [
      { name: 'one team', keys: solo },
      { name: `${TEAMS} teams, round-robin`, keys: spread },
    ];
    const pairs: { name: string; api: Run; ceiling: Run }[] = [];
    console.log('\nMeasured runs (sequential; each after its own warm-up, ANALYZE and CHECKPOINT):');
    for (const s of scenarios) {
      const api = await apiRun(`API (HTTPS) — ${s.name}`, s.keys, REQUESTS, SECONDS);
      const ceiling = await ceilingRun(`ceiling (same SQL via pg) — ${s.name}`, s.keys);
      pairs.push({ name: s.name, api, ceiling });
    }

    const extras: Run[] = [];
    if (EXTRAS) {
      console.log(`\nAnalysis runs (${EXTRA_REQUESTS} requests or ${EXTRA_SECONDS} s each):`);
      // Where the time goes: the services without HTTP, and HTTP without TLS.
      const a = app;
      const direct = async (t: TeamKey) => {
        const p = await a.services.auth.authenticate(`Bearer ${t.key}`);
        const out = await a.services.generationCreator.create(p, 'text-to-image', JSON.parse(BODY));
        if (out.status !== 202) throw new Error(`create answered ${out.status}`);
      };
      const plainApp: App = { ...app, config: Object.freeze({ ...app.config, trustProxy: true }) };
      plainServer = await startHttpServer(plainApp, { port: 0, host: '127.0.0.1' });
      const plainOrigin = `http://127.0.0.1:${plainServer.port}`;

      // The proposed one-statement create (after the same auth lookup), through pg.
      const authSql = captured.find((q) => /"api_keys"/.test(q.text))?.text;
      if (!authSql) throw new Error('no auth lookup among the captured statements');
      const oneStatement = async (t: TeamKey) => {
        await cp.query(authSql, [t.digest]);
        const r = await cp.query(ONE_STATEMENT_CREATE, [
          t.teamId, t.keyId, 1, 'text-to-image', 'text-to-image', 'image',
          JSON.stringify({ model: 'fast', prompt: 'bench', aspect_ratio: '1:1', fast: false, quantity: 1, resolution: '1k', product_ids: [] }),
          null, new Date(Date.now() + 1800_000), [], [], 'run_generation', 5,
        ]);
        if (r.rowCount !== 1) throw new Error('one-statement create inserted nothing');
      };
      // The same statements with the debit moved last (team row locked only for the debit and COMMIT).
      const txn = captured.filter((q) => q.checkout === captured[captured.length - 1]!.checkout);
      const debitAt = txn.findIndex((q) => /^update "teams"/i.test(q.text));
      const reordered = debitAt > 0 ? [...txn.slice(0, debitAt), ...txn.slice(debitAt + 1, -1), txn[debitAt]!, txn[txn.length - 1]!] : txn;
      const replayDebitLast = makeReplayer(
        [...captured.filter((q) => q.checkout !== txn[0]!.checkout), ...reordered],
        origTeam,
        capturedAt,
      );

      for (const s of scenarios) {
        extras.push(await inProcessRun(`services in-process, no HTTP — ${s.name}`, s.keys, EXTRA_REQUESTS, EXTRA_SECONDS, appPool, direct));
        extras.push(await apiRun(`API over plain HTTP (no TLS) — ${s.name}`, s.keys, EXTRA_REQUESTS, EXTRA_SECONDS, { origin: plainOrigin, plain: true }));
        if (debitAt > 0) {
          extras.push(await inProcessRun(`ceiling, debit moved last — ${s.name}`, s.keys, EXTRA_REQUESTS, EXTRA_SECONDS, cp, (t) => replayDebitLast(cp, t)));
        }
        extras.push(await inProcessRun(`ceiling, one statement + auth — ${s.name}`, s.keys, EXTRA_REQUESTS, EXTRA_SECONDS, cp, oneStatement));
      }
    }
    await admin2.end();

    console.log('\nAPI vs ceiling (concurrency ' + CONCURRENCY + '):');
    console.log('| scenario | API req/s | API p50 ms | API p99 ms | ceiling req/s | ceiling p50 ms | ceiling p99 ms | API/ceiling (throughput) |');
    console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
    for (const p of pairs) {
      console.log(
        `| ${p.name} | ${p.api.rps.toFixed(0)} | ${p.api.p50.toFixed(2)} | ${p.api.p99.toFixed(2)} | ${p.ceiling.rps.toFixed(0)} | ${p.ceiling.p50.toFixed(2)} | ${p.ceiling.p99.toFixed(2)} | ${(p.api.rps / p.ceiling.rps).toFixed(2)} |`,
      );
    }
    if (extras.length) {
      console.log('\n| analysis run | req/s | p50 ms | p99 ms | node CPU µs/req | postgres CPU µs/req |');
      console.log('|---|---:|---:|---:|---:|---:|');
      for (const r of [...pairs.flatMap((p) => [p.api, p.ceiling]), ...extras]) {
        console.log(`| ${r.label} | ${r.rps.toFixed(0)} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${(r.nodeUsPerReq - r.loadUsPerReq).toFixed(0)}${r.loadUsPerReq ? ` (+${r.loadUsPerReq.toFixed(0)} load gen)` : ''} | ${r.pgUsPerReq.toFixed(0)} |`);
      }
    }
    const errors = [...pairs.flatMap((p) => [p.api, p.ceiling]), ...extras].reduce((n, r) => n + r.errors, 0);
    console.log(`\n${errors} errors in total; ${((Date.now() - t0) / 1000).toFixed(0)} s in all`);
    if (errors) process.exitCode = 1;
  } finally {
    clearTimeout(watchdog);
    await cleanup();
  }
}

await main();
