import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Agent, request } from 'undici';
import { UNLIMITED_RATE } from '../../test/support/app.ts';
import { runCli, stdoutJson } from '../../test/support/cli-run.ts';
import { startFalFake } from '../../test/support/fal-fake.ts';
import { sendBytes, startImageHost } from '../../test/support/image-host.ts';
import { testVideo } from '../../test/support/media-probe.ts';
import { FIXTURE_PAGE_ID, mediaBytes, startMetaAdLibraryFake } from '../../test/support/meta-ad-library-fake.ts';
import { startWebhookReceiver } from '../../test/support/webhook-receiver.ts';
import { startChaosProxy, type ChaosProxy, type ProxyMode } from './chaos-proxy.ts';
import { createNodes, onDatabase, startPostgres, type Node } from './cluster.ts';
import { createInvariants, type CheckTally, type Invariant } from './invariants.ts';
import { createLoad, type LoadRecord, type Team } from './load.ts';

export interface SoakOptions {
  seconds: number;
  /** Client loops of the load. */
  loops: number;
  /** Seconds between two faults. */
  chaosEverySeconds: number;
  log: (line: string) => void;
}

export interface SoakReport {
  seconds: number;
  load: LoadRecord;
  faults: Map<string, number>;
  checks: Map<Invariant, CheckTally>;
  campaign: { rows: number; finished: boolean };
  drainedSeconds: number;
  /** What the service made of it, read from the database at the end. */
  outcome: Outcome | undefined;
  failed: boolean;
}

const FAL_KEY = 'soak-fal-key:5e1d';

/**
 * `npm run soak`: 2 API processes and 2 workers on one PostgreSQL, a mixed load, and a chaos loop
 * killing, restarting and breaking their parts, with the invariants checked every 5 seconds and
 * once more after the load stops and the service has finished what it accepted.
 */
export async function runSoak(opts: SoakOptions): Promise<SoakReport> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'adforge-soak-'));
  // As root the cluster runs as the postgres user, who must be able to enter the folder.
  await fs.chmod(dir, 0o755);
  const cleanups: Array<() => Promise<unknown>> = [async () => fs.rm(dir, { recursive: true, force: true })];
  const faults = new Map<string, number>();
  const outages: Array<[number, number | undefined]> = [];
  try {
    const db = await startPostgres(dir, (line) => opts.log(`postgres: ${line}`));
    cleanups.unshift(() => db.handle.stop());

    // The world outside: a provider, an ad source, image and video hosts, the customers' webhook receiver.
    const fal = await startFalFake({ key: FAL_KEY, video: await testVideo({ width: 320, height: 180, seconds: 1 }), pollsUntilDone: 2 });
    const source = await startMetaAdLibraryFake({ token: null });
    const media = await mediaBytes();
    const host = await startImageHost({ '/p.png': sendBytes(media.png, 'image/png'), '/v.mp4': sendBytes(await testVideo({ width: 320, height: 180, seconds: 2, audio: true }), 'video/mp4') });
    const receiver = await startWebhookReceiver();
    const falProxy = await startChaosProxy(fal.url, { slowMs: 4000 });
    const hookProxy = await startChaosProxy(receiver.url.replace(/\/hooks$/, ''), { slowMs: 4000 });
    cleanups.unshift(fal.close, source.close, host.close, receiver.close, falProxy.close, hookProxy.close);

    const dataDir = path.join(dir, 'data');
    const env: Record<string, string> = {
      DATABASE_URL: db.url,
      DATA_DIR: dataDir,
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      ALLOW_PRIVATE_NETWORK_URLS: 'true',
      RATE_LIMIT_TIERS: UNLIMITED_RATE,
      FILES_SIGNING_SECRET: 'soak-files-signing-secret-0123456789abcdef',
      FAL_KEY,
      FAL_QUEUE_URL: falProxy.url,
      ENGINE_ROUTES: 'kling-2.6=fal,*=local',
      UPSTREAM_POLL_MS: '300',
      UPSTREAM_WEBHOOKS: 'false',
      AD_LIBRARY_SOURCE_URL: source.baseUrl,
      AD_LIBRARY_SOURCE_BACKOFF_MS: '50',
      LOCAL_ENGINE_DELAY_MS: '200',
      WORKER_HEARTBEAT_SECONDS: '1',
      GENERATION_TIMEOUT_SECONDS: '240',
      SHUTDOWN_GRACE_SECONDS: '5',
      METRICS_PORT: '0',
    };
    const nodes = createNodes(env);
    const { freePort } = await import('../../src/adapters/net/ports.ts');
    nodes.add('api-1', 'serve', await freePort());
    nodes.add('api-2', 'serve', await freePort());
    nodes.add('worker-1', 'worker');
    nodes.add('worker-2', 'worker');
    cleanups.unshift(() => nodes.stopAll());
    // The first node migrates the database and makes the shared TLS certificate; then the others.
    await nodes.start(nodes.api()[0]!);
    await Promise.all(nodes.nodes.slice(1).map((n) => nodes.start(n)));
    const ca = await fs.readFile(path.join(dataDir, 'tls', 'self-signed-cert.pem'), 'utf8');
    opts.log(`service up: ${nodes.nodes.map((n) => n.name).join(', ')} on PostgreSQL ${new URL(db.url).port}`);

    const teams: Team[] = [];
    for (let i = 1; i <= 3; i++) {
      const adminEnv = { DATABASE_URL: db.url, DATA_DIR: dataDir, LOG_LEVEL: 'silent' };
      const team = stdoutJson(await runCli(['team', 'create', '--name', `Soak team ${i}`, '--credits', '1000000', '--json'], adminEnv, { timeoutMs: 30_000 }));
      const key = stdoutJson(await runCli(['key', 'create', '--team', team.id, '--webhook-url', `${hookProxy.url}/hooks`, '--json'], adminEnv, { timeoutMs: 30_000 }));
      teams.push({ teamId: team.id, key: key.key });
    }
    const fixtures = await prepareFixtures(nodes.api()[0]!, ca, teams[0]!, host.url('/p.png'));
    const campaign = await startCampaign(nodes.api()[0]!, ca, teams[0]!, fixtures.voiceId);

    const load = createLoad({
      nodes,
      ca,
      teams,
      fixtures: { ...fixtures, imageUrl: host.url('/p.png'), videoUrl: host.url('/v.mp4'), scrapeUrl: `https://www.facebook.com/ads/library/?view_all_page_id=${FIXTURE_PAGE_ID}` },
    });
    cleanups.unshift(load.close);
    const invariants = createInvariants({
      databaseUrl: db.url,
      filesDir: path.join(dataDir, 'files'),
      load: load.record,
      outages: () => outages,
      receivedEventIds: () => receiver.received.map((r) => String(r.headers['webhook-id'] ?? '')),
      providerPrompts: () => fal.submits.map((s) => String(s.input.prompt)),
    });

    const until = Date.now() + opts.seconds * 1000;
    let running = true;
    const checking = (async () => {
      while (running) {
        await sleep(5000);
        if (running) await invariants.check();
      }
    })();
    const chaos = runChaos({ until, everyMs: opts.chaosEverySeconds * 1000, nodes, falProxy, hookProxy, pidFile: db.pidFile, databaseUrl: db.url, faults, outages, log: opts.log });
    await load.run(opts.loops, until);
    opts.log('load stopped');
    await chaos;
    running = false;
    await checking;
    opts.log('chaos stopped');

    // Everything healthy again: the service finishes what it accepted.
    for (const p of [falProxy, hookProxy]) p.setMode('ok');
    for (const n of nodes.nodes) if (!n.proc?.running()) await nodes.start(n);
    const drainStart = Date.now();
    const finished = await waitFinished(db.url, campaign, 90_000);
    const drainedSeconds = (Date.now() - drainStart) / 1000;
    opts.log(`everything accepted finished: ${finished} after ${drainedSeconds.toFixed(1)} s`);
    await invariants.check(true);
    const outcome = await readOutcome(db.url);
    return {
      seconds: opts.seconds,
      load: load.record,
      faults,
      checks: invariants.tallies,
      campaign: { rows: campaign.rows, finished },
      drainedSeconds,
      outcome,
      failed: invariants.failed() || !finished,
    };
  } finally {
    for (const c of cleanups) await c().catch((e: unknown) => opts.log(`cleanup: ${(e as Error).message}`));
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function api(node: Node, ca: string, team: Team, method: 'GET' | 'POST', p: string, body?: unknown): Promise<any> {
  const dispatcher = new Agent({ connect: { ca } });
  try {
    const res = await request(`https://127.0.0.1:${node.port}${p}`, {
      method,
      dispatcher,
      headers: { authorization: `Bearer ${team.key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    const json = (await res.body.json()) as any;
    if (res.statusCode >= 400) throw new Error(`${method} ${p}: ${res.statusCode} ${JSON.stringify(json)}`);
    return json;
  } finally {
    await dispatcher.close();
  }
}

async function prepareFixtures(node: Node, ca: string, team: Team, imageUrl: string) {
  const product = await api(node, ca, team, 'POST', '/api/v1/products', { name: 'Soak shoe', description: 'A shoe', category: 'shoes', image_url: imageUrl });
  const avatars = await api(node, ca, team, 'GET', '/api/v1/avatars');
  const voices = await api(node, ca, team, 'GET', '/api/v1/voices?limit=1');
  return { productId: product.id as string, avatarId: avatars.data[0].id as string, voiceId: voices.data[0].id as string };
}

/** One campaign of images and voiceovers, started through GraphQL before the chaos begins. */
async function startCampaign(node: Node, ca: string, team: Team, voiceId: string): Promise<{ id: string; rows: number }> {
  const gql = (query: string, variables: Record<string, unknown> = {}) => api(node, ca, team, 'POST', '/graphql', { query, variables });
  const opened = await gql('mutation { openCampaign(name: "soak") { ... on MutationOpenCampaignSuccess { data { id } } } }');
  const id = opened.data.openCampaign.data.id as string;
  const rows = Array.from({ length: 12 }, (_, i) => ({
    row_number: i + 1,
    cells: i % 3 === 2 ? { type: 'text-to-speech', text: `Row ${i + 1} on sale.`, voice_id: voiceId } : { type: 'text-to-image', prompt: `campaign row ${i + 1}`, model: 'fast', aspect_ratio: '1:1' },
  }));
  const added = await gql('mutation ($id: ID!, $rows: [CampaignRowInput!]!) { addCampaignRows(campaign_id: $id, rows: $rows) { __typename ... on AppError { code message } } }', { id, rows });
  if (added.data?.addCampaignRows?.__typename !== 'MutationAddCampaignRowsSuccess') throw new Error(`the campaign's rows were refused: ${JSON.stringify(added)}`);
  const started = await gql('mutation ($id: ID!) { startCampaign(id: $id) { __typename ... on AppError { code message } } }', { id });
  if (started.data?.startCampaign?.__typename !== 'MutationStartCampaignSuccess') throw new Error(`the campaign did not start: ${JSON.stringify(started)}`);
  return { id, rows: rows.length };
}

/**
 * Until nothing is processing and the campaign has finished (the database answering again first).
 * The backlog the load leaves grows with the machine's slowness, so what fails is a backlog that
 * stops shrinking for `stallMs`, not a slow one.
 */
async function waitFinished(databaseUrl: string, campaign: { id: string }, stallMs: number): Promise<boolean> {
  let least = Infinity;
  let progressAt = Date.now();
  while (Date.now() - progressAt < stallMs) {
    const left = await onDatabase(databaseUrl, async (c) => {
      const { rows } = await c.query<{ processing: number; campaign_done: boolean }>(
        `select (select count(*) from generations where status = 'processing')::int as processing,
                (select status = 'submitted' and not exists (select from campaign_rows r where r.campaign_id = c.id and r.generation_id is null and r.voiceover_id is null and r.error is null) from campaigns c where c.id = $1) as campaign_done`,
        [campaign.id],
      );
      return rows[0]!.processing + (rows[0]!.campaign_done ? 0 : 1);
    });
    if (left === 0) return true;
    if (left !== undefined && left < least) {
      least = left;
      progressAt = Date.now();
    }
    await sleep(1000);
  }
  return false;
}

export const FAULTS = [
  'worker SIGKILL',
  'provider fails (500)',
  'API node restart (SIGTERM, drained)',
  'webhook receiver fails (500)',
  'PostgreSQL SIGKILL (restarted by its supervisor)',
  'provider slow (4 s)',
  'webhook receiver slow (4 s)',
  'backends terminated (pg_terminate_backend)',
  'provider vanishes',
  'API node SIGKILL and restart',
  'webhook receiver vanishes',
] as const;

async function runChaos(o: {
  until: number;
  everyMs: number;
  nodes: ReturnType<typeof createNodes>;
  falProxy: ChaosProxy;
  hookProxy: ChaosProxy;
  pidFile: string;
  databaseUrl: string;
  faults: Map<string, number>;
  outages: Array<[number, number | undefined]>;
  log: (line: string) => void;
}): Promise<void> {
  let n = 0;
  const broken = async (proxy: ChaosProxy, mode: ProxyMode) => {
    proxy.setMode(mode);
    await sleep(Math.min(6000, o.everyMs - 500));
    proxy.setMode('ok');
  };
  // Faults on a fixed beat from the start (one that outlasts the beat delays only the next), so a
  // short soak still gets through the whole list.
  const start = Date.now();
  while (start + (n + 1) * o.everyMs < o.until) {
    await sleep(Math.max(0, start + (n + 1) * o.everyMs - Date.now()));
    const fault = FAULTS[n % FAULTS.length]!;
    const pickFrom = <T,>(list: T[]) => list[Math.floor(n / FAULTS.length) % list.length]!;
    n++;
    o.faults.set(fault, (o.faults.get(fault) ?? 0) + 1);
    o.log(`chaos: ${fault}`);
    try {
      switch (fault) {
        case 'worker SIGKILL': {
          const w = pickFrom(o.nodes.workers());
          await o.nodes.stop(w, 'SIGKILL');
          await sleep(1500);
          await o.nodes.start(w);
          break;
        }
        case 'API node restart (SIGTERM, drained)':
        case 'API node SIGKILL and restart': {
          const a = pickFrom(o.nodes.api());
          await o.nodes.stop(a, fault.startsWith('API node SIGKILL') ? 'SIGKILL' : 'SIGTERM');
          await o.nodes.start(a);
          break;
        }
        case 'PostgreSQL SIGKILL (restarted by its supervisor)': {
          const pid = Number((await fs.readFile(o.pidFile, 'utf8')).split('\n')[0]);
          const outage: [number, number | undefined] = [Date.now(), undefined];
          o.outages.push(outage);
          process.kill(pid, 'SIGKILL');
          outage[1] = await databaseBack(o.databaseUrl);
          break;
        }
        case 'backends terminated (pg_terminate_backend)': {
          const outage: [number, number | undefined] = [Date.now(), undefined];
          o.outages.push(outage);
          const ended = await onDatabase(o.databaseUrl, (c) =>
            c.query(`select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() and backend_type = 'client backend'`),
          );
          outage[1] = Date.now() + 2000;
          if (!ended) throw new Error('the database could not be reached');
          break;
        }
        case 'provider fails (500)':
          await broken(o.falProxy, 'fail');
          break;
        case 'provider slow (4 s)':
          await broken(o.falProxy, 'slow');
          break;
        case 'provider vanishes':
          await broken(o.falProxy, 'vanish');
          break;
        case 'webhook receiver fails (500)':
          await broken(o.hookProxy, 'fail');
          break;
        case 'webhook receiver slow (4 s)':
          await broken(o.hookProxy, 'slow');
          break;
        case 'webhook receiver vanishes':
          await broken(o.hookProxy, 'vanish');
          break;
      }
    } catch (e) {
      o.log(`chaos: ${fault} went wrong: ${(e as Error).message}`);
    }
  }
}

/** When the database answers again. */
async function databaseBack(url: string): Promise<number> {
  while (!(await onDatabase(url, (c) => c.query('select 1'), 1000))) await sleep(200);
  return Date.now();
}

interface Outcome {
  generations: Record<string, number>;
  refunded: number;
  webhooks: { ok: number; failed: number };
  providerJobs: Record<string, number>;
}

async function readOutcome(url: string): Promise<Outcome | undefined> {
  return onDatabase(url, async (c) => {
    const count = async (q: string) => Object.fromEntries((await c.query<{ k: string; n: number }>(q)).rows.map((r) => [r.k, r.n]));
    return {
      generations: await count(`select case when status = 'failed' and error = 'cancelled' then 'cancelled' else status end as k, count(*)::int as n from generations group by 1 order by 1`),
      refunded: Number((await c.query(`select count(*)::int as n from credit_ledger where kind = 'refund'`)).rows[0].n),
      webhooks: (await c.query(`select count(*) filter (where ok)::int as ok, count(*) filter (where not ok)::int as failed from webhook_deliveries`)).rows[0],
      providerJobs: await count(`select state as k, count(*)::int as n from upstream_jobs group by 1 order by 1`),
    };
  });
}

const listed = (counts: Record<string, number>) => Object.entries(counts).map(([k, n]) => `${k} ${n}`).join(', ');

/** The table printed at the end and written to bench/RESULTS-soak.md. */
export function soakTable(r: SoakReport): string {
  const byStatus = new Map<number, number>();
  const byKind = new Map<string, number>();
  for (const a of r.load.answers) {
    byStatus.set(a.status, (byStatus.get(a.status) ?? 0) + 1);
    byKind.set(a.kind, (byKind.get(a.kind) ?? 0) + 1);
  }
  const lines = [
    `Soak of ${r.seconds} s: ${r.failed ? 'FAILED' : 'every invariant held'}`,
    '',
    '| Load held | |',
    '|---|---|',
    `| requests answered | ${r.load.answers.length} (${(r.load.answers.length / r.seconds).toFixed(1)}/s) |`,
    ...[...byKind.entries()].sort().map(([k, n]) => `| ${k} | ${n} |`),
    `| answers by status | ${[...byStatus.entries()].sort(([a], [b]) => a - b).map(([s, n]) => `${s === 0 ? 'no connection' : s}: ${n}`).join(', ')} |`,
    `| generations accepted | ${r.load.accepted.size} |`,
    `| voiceovers made | ${r.load.voiceovers} |`,
    `| Idempotency-Key replays | ${r.load.replays.same} answered their first generation, ${r.load.replays.different} did not |`,
    `| campaign | ${r.campaign.rows} rows, ${r.campaign.finished ? 'finished' : 'NOT finished'} |`,
    `| after the load: everything accepted finished in | ${r.drainedSeconds.toFixed(1)} s |`,
    ...(r.outcome
      ? [
          `| generations at the end (campaign rows included) | ${listed(r.outcome.generations)}; ${r.outcome.refunded} refunds |`,
          `| webhook attempts recorded | ${r.outcome.webhooks.ok} delivered, ${r.outcome.webhooks.failed} failed (not retried, by the spec) |`,
          `| provider (fal) attempts | ${listed(r.outcome.providerJobs)} |`,
        ]
      : []),
    '',
    '| Fault injected | times |',
    '|---|---|',
    ...[...r.faults.entries()].map(([f, n]) => `| ${f} | ${n} |`),
    '',
    '| Invariant | checks passed | failed | skipped (database away) |',
    '|---|---|---|---|',
    ...[...r.checks.entries()].map(([name, t]) => `| ${name} | ${t.passed} | ${t.failed} | ${t.skipped} |`),
  ];
  const failures = [...r.checks.entries()].filter(([, t]) => t.failures.length);
  if (failures.length) lines.push('', 'Failures:', ...failures.flatMap(([name, t]) => t.failures.map((f) => `- ${name}: ${f}`)));
  return lines.join('\n');
}
