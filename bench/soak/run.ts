import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent } from 'undici';
import { apiClient, UNLIMITED_RATE } from '../../test/support/app.ts';
import { runCli, stdoutJson } from '../../test/support/cli-run.ts';
import { startFalFake } from '../../test/support/fal-fake.ts';
import { sendBytes, startImageHost } from '../../test/support/image-host.ts';
import { testVideo } from '../../test/support/media-probe.ts';
import { FIXTURE_PAGE_ID, mediaBytes, startMetaAdLibraryFake } from '../../test/support/meta-ad-library-fake.ts';
import { startWebhookReceiver } from '../../test/support/webhook-receiver.ts';
import { runChaos, type Outage } from './chaos.ts';
import { startChaosProxy } from './chaos-proxy.ts';
import { createNodes, onDatabase, startPostgres } from './cluster.ts';
import { createInvariants } from './invariants.ts';
import { createLoad, type Team } from './load.ts';
import { readOutcome, type SoakReport } from './report.ts';

export interface SoakOptions {
  seconds: number;
  /** Client loops of the load. */
  loops: number;
  /** Seconds between two faults. */
  chaosEverySeconds: number;
  log: (line: string) => void;
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
  const outages: Outage[] = [];
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
    const { freePort } = await import('../../src/db/ports.ts');
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
    const setup = new Agent({ connect: { ca } });
    cleanups.unshift(() => setup.close());
    const api = setupApi(`https://127.0.0.1:${nodes.api()[0]!.port}`, setup, teams[0]!);
    const fixtures = await prepareFixtures(api, host.url('/p.png'));
    const campaign = await startCampaign(api, fixtures.voiceId);

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
    let finished = await waitFinished(db.url, campaign, 90_000);
    if (!finished) {
      // A backlog that stopped shrinking is worth reading (logged now), but not yet a failure: the
      // promise is that each generation ends by its deadline (the sweeper fails and refunds what
      // is late), so the drain waits that long before the final check judges it.
      opts.log(`the drain stalled for 90 s; waiting for the deadlines of what is left`);
      for (const n of nodes.workers()) {
        const out = n.proc?.output();
        const tail = `${out?.stdout ?? ''}${out?.stderr ?? ''}`.trim().split('\n').slice(-12);
        for (const line of tail) opts.log(`${n.name} said: ${line.slice(0, 400)}`);
      }
      // Last, so that a log read from its end (a CI summary) shows what was left first.
      for (const line of await describeUnfinished(db.url, campaign)) opts.log(`unfinished: ${line}`);
      finished = await waitPastDeadlines(db.url, campaign);
    }
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

type Api = (method: 'GET' | 'POST', path: string, body?: unknown) => Promise<any>;

/** One team's calls to one node for the set-up; anything but a success stops the soak. */
function setupApi(baseUrl: string, dispatcher: Agent, team: Team): Api {
  const call = apiClient(baseUrl, dispatcher);
  return async (method, p, body) => {
    const res = await call(method, p, { key: team.key, ...(body === undefined ? {} : { body }) });
    if (res.status >= 400) throw new Error(`${method} ${p}: ${res.status} ${res.text}`);
    return res.body;
  };
}

async function prepareFixtures(api: Api, imageUrl: string) {
  const product = await api('POST', '/api/v1/products', { name: 'Soak shoe', description: 'A shoe', category: 'shoes', image_url: imageUrl });
  const avatars = await api('GET', '/api/v1/avatars');
  const voices = await api('GET', '/api/v1/voices?limit=1');
  return { productId: product.id as string, avatarId: avatars.data[0].id as string, voiceId: voices.data[0].id as string };
}

/** One campaign of images and voiceovers, started through GraphQL before the chaos begins. */
async function startCampaign(api: Api, voiceId: string): Promise<{ id: string; rows: number }> {
  const gql = (query: string, variables: Record<string, unknown> = {}) => api('POST', '/graphql', { query, variables });
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
 * What a stalled drain left, for the one who reads the failure: each generation still processing
 * with its upstream attempts and its jobs in the queue, and the campaign's rows not yet submitted.
 */
async function describeUnfinished(databaseUrl: string, campaign: { id: string }): Promise<string[]> {
  const lines = await onDatabase(databaseUrl, async (c) => {
    const { rows } = await c.query<{ line: string }>(
      `select json_build_object(
          'generation', g.id, 'type', g.type, 'created_at', g.created_at, 'deadline_at', g.deadline_at,
          'upstream', (select json_agg(json_build_object('state', u.state, 'polls', u.polls, 'error', u.error, 'updated_at', u.updated_at,
                         'events', (select json_agg(json_build_object('state', e.state, 'detail', e.detail, 'at', e.at) order by e.id) from upstream_job_events e where e.upstream_job_id = u.id)))
                       from upstream_jobs u where u.generation_id = g.id),
          'jobs', (select json_agg(json_build_object('task', t.identifier, 'key', j.key, 'attempts', j.attempts, 'max', j.max_attempts, 'priority', j.priority, 'run_at', j.run_at,
                     'locked_at', j.locked_at, 'locked_by', j.locked_by, 'last_error', left(j.last_error, 200)))
                   from graphile_worker._private_jobs j join graphile_worker._private_tasks t on t.id = j.task_id
                   where j.key = 'generation:' || g.id or j.key in (select 'upstream:' || u.id from upstream_jobs u where u.generation_id = g.id)
                      or j.payload->>'generation_id' = g.id::text
                      or j.payload->>'upstream_job_id' in (select u.id::text from upstream_jobs u where u.generation_id = g.id))
        )::text as line
       from generations g where g.status = 'processing'
       union all
       select json_build_object('campaign', c.id, 'status', c.status,
          'rows_waiting', (select count(*) from campaign_rows r where r.campaign_id = c.id and r.generation_id is null and r.voiceover_id is null and r.error is null),
          'jobs', (select json_agg(json_build_object('task', t.identifier, 'attempts', j.attempts, 'run_at', j.run_at, 'locked_by', j.locked_by, 'last_error', left(j.last_error, 200)))
                   from graphile_worker._private_jobs j join graphile_worker._private_tasks t on t.id = j.task_id where j.payload->>'campaign_id' = c.id::text))::text
       from campaigns c where c.id = $1`,
      [campaign.id],
    );
    return rows.map((r) => r.line);
  });
  return lines ?? ['(the database did not answer)'];
}

/** Generations processing, plus one while the campaign has rows not yet submitted. */
async function countUnfinished(databaseUrl: string, campaign: { id: string }): Promise<number | undefined> {
  return onDatabase(databaseUrl, async (c) => {
    const { rows } = await c.query<{ processing: number; campaign_done: boolean }>(
      `select (select count(*) from generations where status = 'processing')::int as processing,
              (select status = 'submitted' and not exists (select from campaign_rows r where r.campaign_id = c.id and r.generation_id is null and r.voiceover_id is null and r.error is null) from campaigns c where c.id = $1) as campaign_done`,
      [campaign.id],
    );
    return rows[0]!.processing + (rows[0]!.campaign_done ? 0 : 1);
  });
}

/**
 * Until everything has finished, or the latest deadline of what is still processing has passed
 * by the sweeper's period and a margin (90 s): the final check then judges what is left.
 */
async function waitPastDeadlines(databaseUrl: string, campaign: { id: string }): Promise<boolean> {
  const latest = await onDatabase(databaseUrl, async (c) => {
    const { rows } = await c.query<{ at: Date | null }>(`select max(deadline_at) as at from generations where status = 'processing'`);
    return rows[0]!.at;
  });
  // Campaign rows not yet submitted get their deadlines when they are: give them one more period.
  const until = (latest ? latest.getTime() : Date.now()) + 90_000;
  while (Date.now() < until) {
    if ((await countUnfinished(databaseUrl, campaign)) === 0) return true;
    await sleep(1000);
  }
  return (await countUnfinished(databaseUrl, campaign)) === 0;
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
    const left = await countUnfinished(databaseUrl, campaign);
    if (left === 0) return true;
    if (left !== undefined && left < least) {
      least = left;
      progressAt = Date.now();
    }
    await sleep(1000);
  }
  return false;
}
