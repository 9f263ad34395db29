// `node bench/statement-breakdown.ts`: where PostgreSQL's time goes in one create, per statement
// (pg_stat_statements: execution and planning time, nested statements of graphile_worker.add_job
// included), for today's create (one statement, debit last, prepared) and the one before issue 14
// (bench/legacy-create.ts: seven unnamed statements), each measured twice, alternating. A separate, instrumented run: pg_stat_statements is loaded here only, never in
// `npm run bench`. About a minute.
//
// Knobs: BREAKDOWN_REQUESTS (3000), BREAKDOWN_WARMUP (1000), BENCH_CONCURRENCY (32), BENCH_TEAMS (64).
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { buildApp, type App } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { startEmbeddedPostgres, type EmbeddedHandle } from '../src/db/embedded.ts';
import { createLogger } from '../src/log.ts';
import type { Principal } from '../src/services/principal.ts';
import { createDb } from '../src/db/pool.ts';
import { createAuthService } from '../src/services/auth.ts';
import { createLegacyCreator } from './legacy-create.ts';

const REQUESTS = Number(process.env.BREAKDOWN_REQUESTS || 3000);
const WARMUP = Number(process.env.BREAKDOWN_WARMUP || 1000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY || 32);
const TEAMS = Number(process.env.BENCH_TEAMS || 64);
const BODY = { model: 'fast', prompt: 'bench', aspect_ratio: '1:1' };

const tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'adforge-breakdown-'));
await fs.chmod(tmp, 0o755);
const dir = path.join(tmp, 'pg');
let embedded: EmbeddedHandle | undefined;
let app: App | undefined;
let admin: pg.Client | undefined;
const watchdog = setTimeout(() => {
  console.error('breakdown: still running after 240 s; giving up');
  process.exitCode = 2;
  void cleanup().finally(() => process.exit(2));
}, 240_000);
watchdog.unref();
async function cleanup(): Promise<void> {
  await admin?.end().catch(() => {});
  await app?.close().catch(() => {});
  await embedded?.stop().catch(() => {});
  await fs.rm(tmp, { recursive: true, force: true }).catch(() => {});
}

try {
  embedded = await startEmbeddedPostgres({ dir });
  const setup = new pg.Client(embedded.url('postgres'));
  await setup.connect();
  await setup.query(`alter system set shared_preload_libraries = 'pg_stat_statements'`);
  await setup.query(`alter system set pg_stat_statements.track = 'all'`);
  await setup.query(`alter system set pg_stat_statements.track_planning = on`);
  await setup.query('create database adforge');
  await setup.end();
  await embedded.stop(); // shared_preload_libraries needs a restart
  embedded = await startEmbeddedPostgres({ dir });
  const url = embedded.url('adforge');
  app = await buildApp(loadConfig({ DATABASE_URL: url, DATA_DIR: path.join(tmp, 'data'), LOG_LEVEL: 'warn' }), createLogger('warn'));
  admin = new pg.Client(url);
  await admin.connect();
  await admin.query('create extension pg_stat_statements');
  const a = app;
  const adm = admin;
  const postmaster = Number((await fs.readFile(path.join(dir, 'postmaster.pid'), 'utf8')).split('\n')[0]);
  /** CPU time (ms) of this cluster's processes (Linux /proc; 0 elsewhere). */
  const clusterCpuMs = async () => {
    let total = 0;
    for (const pid of await fs.readdir('/proc').catch(() => [] as string[])) {
      if (!/^\d+$/.test(pid)) continue;
      const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(pid) === postmaster || Number(f[1]) === postmaster) total += ((Number(f[11]) + Number(f[12])) * 1000) / 100;
    }
    return total;
  };

  const keys: string[] = [];
  for (let i = 0; i < TEAMS; i++) {
    const t = await a.services.teams.createTeam({ name: `t${i}`, tier: 'starter', credits_limit: 10_000_000 });
    keys.push((await a.services.teams.createKey(t.id)).key);
  }
  // Before: a plain pool (no named statements) for the legacy path and its key lookup.
  const legacyPool = new pg.Pool({ connectionString: url, max: 10 });
  legacyPool.on('error', () => {});
  const legacyDb = createDb(legacyPool);
  const legacy = createLegacyCreator({ db: legacyDb, config: a.config });
  const legacyAuth = createAuthService({ db: legacyDb, config: a.config });
  const variants: [string, (p: Principal) => Promise<unknown>, typeof legacyAuth][] = [
    ['before issue 14: BEGIN; debit; generation; ledger; add_job; COMMIT (unnamed)', (p) => legacy.create(p, 'text-to-image', BODY), legacyAuth],
    ['today: one statement, debit last; the key lookup and the create statement prepared', (p) => a.services.generationCreator.create(p, 'text-to-image', BODY), a.services.auth],
  ];
  const run = async (n: number, create: (p: Principal) => Promise<unknown>, auth: typeof legacyAuth) => {
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < n) {
          const i = next++;
          const p = await auth.authenticate(`Bearer ${keys[i % keys.length]}`);
          await create(p);
        }
      }),
    );
  };

  console.log(`PostgreSQL time per create (µs), ${REQUESTS} creates over ${TEAMS} teams at concurrency ${CONCURRENCY}, auth lookup included`);
  // Twice, alternating, so that the order (tables growing, a neighbour's load) shows as noise, not as a difference.
  for (const [name, create, auth] of [...variants, ...variants]) {
    await run(WARMUP, create, auth);
    await adm.query('analyze');
    await adm.query('select pg_stat_statements_reset()');
    const cpu0 = await clusterCpuMs();
    await run(REQUESTS, create, auth);
    const cpuUs = (((await clusterCpuMs()) - cpu0) * 1000) / REQUESTS;
    const { rows } = await adm.query<{ exec: string; plan: string; calls: string; toplevel: boolean; query: string }>(
      `select round(total_exec_time::numeric * 1000 / $1) as exec, round(total_plan_time::numeric * 1000 / $1) as plan,
              calls, toplevel, regexp_replace(query, '\\s+', ' ', 'g') as query
       from pg_stat_statements
       where calls >= $1 / 2 and dbid = (select oid from pg_database where datname = current_database())
       order by total_exec_time + total_plan_time desc`,
      [REQUESTS],
    );
    const top = rows.filter((r) => r.toplevel);
    const sum = (k: 'exec' | 'plan') => top.reduce((n, r) => n + Number(r[k]), 0);
    console.log(`\n${name}: ${top.length} top-level statements, ${sum('exec')} µs executing + ${sum('plan')} µs planning per create; all PostgreSQL processes used ${cpuUs.toFixed(0)} µs CPU per create`);
    console.log('| statement | calls per create | exec µs | plan µs | nested |');
    console.log('|---|---:|---:|---:|---|');
    for (const r of rows.slice(0, 14)) {
      console.log(`| \`${r.query.slice(0, 90)}\` | ${(Number(r.calls) / REQUESTS).toFixed(0)} | ${r.exec} | ${r.plan} | ${r.toplevel ? '' : 'yes'} |`);
    }
  }
  await legacyPool.end().catch(() => {});
} finally {
  clearTimeout(watchdog);
  await cleanup();
}
