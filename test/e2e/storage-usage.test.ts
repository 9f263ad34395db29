import fs from 'node:fs/promises';
import path from 'node:path';
import { sql } from 'kysely';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, waitForGeneration, type TestService } from '../support/app.ts';
import { graphqlClient } from '../support/graphql-client.ts';
import { paddedPng, pngBytes } from '../support/image-host.ts';
import { runCli, stdoutJson } from '../support/cli-run.ts';
import { operatorActor } from '../../src/services/audit.ts';
import { largestTeamStorage } from '../../src/repositories/storage-usage.ts';

// Storage usage per team (issue 28 item 5): what the counters say is checked against the bytes
// really in storage after each step (an upload, a product, a generation's results, a delete, an
// upload's expiry, retention); the per-tier quota refuses uploads and creates and changes nothing.

const TOKEN = 'metrics-token-0123456789';
let svc: TestService;
type Team = Awaited<ReturnType<TestService['team']>>;
let a: Team;
let b: Team;
let png: Buffer;
let agent: Agent;

beforeAll(async () => {
  // pro teams hold at most 300 KB (307,200 bytes); other tiers have no quota.
  svc = await startTestService({ METRICS_TOKEN: TOKEN, STORAGE_QUOTA_TIERS: 'pro=300KB' }, { worker: true });
  a = await svc.team({ name: 'A', credits: 1000 });
  b = await svc.team({ name: 'B', credits: 1000 });
  png = await pngBytes(96, 64, '#cc3366');
  agent = new Agent({ connect: { ca: await fs.readFile(path.join(svc.dataDir, 'tls', 'self-signed-cert.pem'), 'utf8') } });
});
afterAll(async () => {
  await agent?.close();
  await svc?.close();
});

const usage = async (t: Team) => {
  const g = await graphqlClient(svc);
  try {
    const res = await g.gql('{ team { storage { outputs_bytes inputs_bytes uploads_bytes total_bytes quota_bytes } } }', {}, t.key);
    expect(res.body.errors).toBeUndefined();
    return res.body.data.team.storage;
  } finally {
    await g.close();
  }
};

const size = async (key: string | null | undefined) => (key ? ((await svc.app.storage.get(key))?.bytes.length ?? 0) : 0);

/** What the team's rows name in storage, read from storage itself: the truth the counters must match. */
async function stored(teamId: string) {
  const db = svc.app.db;
  let outputs = 0;
  let inputs = 0;
  let uploads = 0;
  for (const g of await db.selectFrom('generations').select(['id', 'result_keys']).where('team_id', '=', teamId).execute()) {
    for (const k of g.result_keys) outputs += await size(k);
    inputs += await size(`upstream-inputs/${g.id}/speech.mp3`);
  }
  for (const v of await db.selectFrom('voiceovers').select('audio_key').where('team_id', '=', teamId).execute()) outputs += await size(v.audio_key);
  for (const p of await db.selectFrom('products').select('image_key').where('team_id', '=', teamId).execute()) inputs += await size(p.image_key);
  for (const p of await db.selectFrom('avatars').select('image_key').where('team_id', '=', teamId).execute()) inputs += await size(p.image_key);
  for (const u of await db.selectFrom('uploads').select('storage_key').where('team_id', '=', teamId).where('status', '=', 'ready').execute()) uploads += await size(u.storage_key);
  return { outputs_bytes: outputs, inputs_bytes: inputs, uploads_bytes: uploads, total_bytes: outputs + inputs + uploads };
}

async function expectExact(t: Team) {
  const truth = await stored(t.teamId);
  expect(await usage(t)).toMatchObject(truth);
  return truth;
}

/** The upload files on disk under the team's folder. */
async function uploadFiles(teamId: string): Promise<string[]> {
  const all = (await fs.readdir(svc.dataDir, { recursive: true })) as string[];
  return all.filter((f) => f.includes(`uploads${path.sep}${teamId}${path.sep}`) && !path.basename(f).startsWith('.'));
}

async function upload(t: Team, body: Buffer) {
  const res = await request(`${svc.baseUrl}/api/v1/uploads`, { method: 'POST', dispatcher: agent, headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/octet-stream' }, body });
  const text = await res.body.text();
  return { status: res.statusCode, text, body: text ? JSON.parse(text) : undefined };
}

describe('storage usage', () => {
  let product: string;
  let generation: string;
  let uploadId: string;

  it('counts an upload, a product image and a generation\'s results, exactly, and per team', async () => {
    expect(await usage(a)).toEqual({ outputs_bytes: 0, inputs_bytes: 0, uploads_bytes: 0, total_bytes: 0, quota_bytes: null });

    const up = await upload(a, png);
    expect(up.status, up.text).toBe(201);
    uploadId = up.body.id;
    expect(await usage(a)).toMatchObject({ uploads_bytes: png.length, total_bytes: png.length });

    const p = await svc.api('POST', '/api/v1/products', { key: a.key, body: { name: 'Shoe', description: 'Red shoe', category: 'shoes', image_url: up.body.url } });
    expect(p.status, p.text).toBe(201);
    product = p.body.id;
    expect(await usage(a)).toMatchObject({ inputs_bytes: png.length, uploads_bytes: png.length });

    const made = await svc.api('POST', '/api/v1/images/text-to-image', { key: a.key, body: { model: 'fast', prompt: 'a shoe', aspect_ratio: '1:1', quantity: 2 } });
    expect(made.status, made.text).toBe(202);
    generation = made.body.generation_id;
    expect((await waitForGeneration(svc, a.key, generation)).status).toBe('completed');
    const truth = await expectExact(a);
    expect(truth.outputs_bytes).toBeGreaterThan(0);
    expect(truth.total_bytes).toBe(truth.outputs_bytes + 2 * png.length);
    // REST answers the same.
    const rest = await svc.api('GET', '/api/v1/account/storage', { key: a.key });
    expect(rest.status).toBe(200);
    expect(rest.body).toEqual(await usage(a));

    // Another team's usage is its own.
    expect(await usage(b)).toMatchObject({ total_bytes: 0 });
    const theirs = await upload(b, await paddedPng(5000));
    expect(theirs.status).toBe(201);
    expect(await usage(b)).toMatchObject({ uploads_bytes: 5000, total_bytes: 5000 });
    await expectExact(a);
  });

  it('goes down exactly with a generation delete, an upload expiry, retention and a product delete', async () => {
    const before = await usage(a);
    const gone = await stored(a.teamId);
    const del = await svc.api('DELETE', `/api/v1/generations/${generation}`, { key: a.key });
    expect(del.status).toBe(204);
    expect(await usage(a)).toMatchObject({ outputs_bytes: 0, inputs_bytes: before.inputs_bytes, uploads_bytes: before.uploads_bytes, total_bytes: gone.total_bytes - gone.outputs_bytes });

    await sql`update uploads set expires_at = now() - interval '1 minute' where id = ${uploadId}`.execute(svc.app.db);
    expect(await svc.app.services.uploads.deleteExpired()).toBeGreaterThanOrEqual(1);
    expect(await usage(a)).toMatchObject({ uploads_bytes: 0, inputs_bytes: png.length, total_bytes: png.length });
    await expectExact(a);

    // Retention: an old generation's results go, the row stays with 0 bytes.
    const old = await svc.api('POST', '/api/v1/images/text-to-image', { key: a.key, body: { model: 'fast', prompt: 'an old shoe', aspect_ratio: '1:1' } });
    expect((await waitForGeneration(svc, a.key, old.body.generation_id)).status).toBe('completed');
    const withOld = await expectExact(a);
    expect(withOld.outputs_bytes).toBeGreaterThan(0);
    await sql`update generations set created_at = now() - interval '10 days' where id = ${old.body.generation_id}`.execute(svc.app.db);
    await svc.app.services.retention.set(a.teamId, { days: 5 }, operatorActor());
    await svc.app.services.retention.run();
    expect(await usage(a)).toMatchObject({ outputs_bytes: 0, inputs_bytes: png.length, total_bytes: png.length });
    await svc.app.services.retention.set(a.teamId, { days: null }, operatorActor());

    expect((await svc.api('DELETE', `/api/v1/products/${product}`, { key: a.key })).status).toBe(204);
    expect(await usage(a)).toMatchObject({ total_bytes: 0 });
    expect(await usage(b)).toMatchObject({ total_bytes: 5000 });
  });

  it('the metric shows bytes per team', async () => {
    const text = (await svc.api('GET', '/metrics', { headers: { authorization: `Bearer ${TOKEN}` } })).text;
    const line = text.split('\n').find((l) => l.startsWith(`adforge_team_storage_bytes{team="${b.teamId}"}`));
    expect(line).toBeDefined();
    expect(Number(line!.split(' ').at(-1))).toBe(5000);
    expect(text).toMatch(/^adforge_storage_bytes\{kind="uploads"\} \d+/m);
    // Bounded: STORAGE_METRIC_TEAMS names the teams storing the most, largest first; 0 names none.
    const all = await largestTeamStorage(svc.app.db, 100);
    expect(all.map((t) => t.team_id)).toContain(b.teamId);
    expect(all.every((t, i) => i === 0 || all[i - 1]!.total_bytes >= t.total_bytes)).toBe(true);
    expect(await largestTeamStorage(svc.app.db, 1)).toEqual(all.slice(0, 1));
    expect(await largestTeamStorage(svc.app.db, 0)).toEqual([]);
  });

  it('the CLI shows a team\'s usage, and recount restores sizes that rows written before the counters lack', async () => {
    const c = await svc.team({ name: 'C' });
    const up = await upload(c, png);
    const p = await svc.api('POST', '/api/v1/products', { key: c.key, body: { name: 'Shoe', description: 'Red shoe', category: 'shoes', image_url: up.body.url } });
    expect(p.status).toBe(201);
    // As a product written before migration 0021: no size recorded.
    await sql`update products set image_bytes = 0 where id = ${p.body.id}`.execute(svc.app.db);
    expect(await usage(c)).toMatchObject({ inputs_bytes: 0 });
    const env = { DATABASE_URL: svc.databaseUrl, DATA_DIR: svc.dataDir, LOG_LEVEL: 'silent' };
    const recount = await runCli(['storage', 'recount', '--team', c.teamId, '--json'], env, { timeoutMs: 60_000 });
    expect(recount.code, recount.stderr).toBe(0);
    expect(stdoutJson(recount)).toMatchObject({ teams: 1, rows_changed: 1 });
    await expectExact(c);
    const show = await runCli(['storage', 'show', '--team', c.teamId, '--json'], env, { timeoutMs: 60_000 });
    expect(show.code, show.stderr).toBe(0);
    expect(stdoutJson(show)).toMatchObject({ team_id: c.teamId, inputs_bytes: png.length, uploads_bytes: png.length, total_bytes: 2 * png.length, quota_bytes: null });
    const neither = await runCli(['storage', 'recount', '--json'], env, { timeoutMs: 60_000 });
    expect(neither.code).not.toBe(0);
    const unknown = await runCli(['storage', 'show', '--team', 'not-a-team', '--json'], env, { timeoutMs: 60_000 });
    expect(unknown.code).not.toBe(0);
    expect(unknown.stdout + unknown.stderr).toMatch(/team/);
    expect(unknown.stdout + unknown.stderr).not.toMatch(/internal|syntax/i);
  });
});

describe('storage quota (pro: 300 KB)', () => {
  const QUOTA = 300 * 1024;
  const state = async (t: Team) =>
    (
      await sql<{ g: number; u: number; used: number; ledger: number; jobs: number }>`select
        (select count(*)::int from generations where team_id = ${t.teamId}) as g,
        (select count(*)::int from uploads where team_id = ${t.teamId}) as u,
        (select credits_used from teams where id = ${t.teamId}) as used,
        (select count(*)::int from credit_ledger where team_id = ${t.teamId}) as ledger,
        (select count(*)::int from graphile_worker.jobs) as jobs`.execute(svc.app.db)
    ).rows[0]!;

  it('refuses an upload past the quota with a 403 naming it, and stores nothing', async () => {
    const t = await svc.team({ name: 'Pro', tier: 'pro', credits: 1000 });
    expect((await upload(t, await paddedPng(200_000))).status).toBe(201);
    expect(await usage(t)).toMatchObject({ total_bytes: 200_000, quota_bytes: QUOTA });
    const before = await state(t);
    const files = await uploadFiles(t.teamId);
    expect(files).toHaveLength(1);
    const res = await upload(t, await paddedPng(150_000));
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('forbidden');
    expect(res.body.error.message).toMatch(/storage quota/i);
    expect(res.body.error.message).toMatch(/300 KB/);
    expect(await state(t)).toEqual(before);
    expect(await uploadFiles(t.teamId)).toEqual(files);
    expect(await usage(t)).toMatchObject({ total_bytes: 200_000 });
    await expectExact(t);
    // Up to the quota exactly is allowed.
    expect((await upload(t, await paddedPng(QUOTA - 200_000))).status).toBe(201);
    expect(await usage(t)).toMatchObject({ total_bytes: QUOTA });
  });

  it('refuses a new generation once the quota is used, over REST and GraphQL, before anything is charged or queued', async () => {
    const t = await svc.team({ name: 'Pro full', tier: 'pro', credits: 1000 });
    const full = await upload(t, await paddedPng(QUOTA));
    expect(full.status, full.text).toBe(201);
    const before = await state(t);
    const res = await svc.api('POST', '/api/v1/images/text-to-image', { key: t.key, body: { model: 'fast', prompt: 'a shoe', aspect_ratio: '1:1' } });
    expect(res.status).toBe(403);
    expect(res.body.error).toMatchObject({ code: 'forbidden' });
    expect(res.body.error.message).toMatch(/storage quota/i);
    const g = await graphqlClient(svc);
    try {
      const m = await g.gql(
        `mutation { createTextToImage(input: { model: "fast", prompt: "a shoe", aspect_ratio: "1:1" }) { __typename ... on AppError { code message } } }`,
        {},
        t.key,
      );
      expect(m.body.data?.createTextToImage, JSON.stringify(m.body)).toMatchObject({ code: 'forbidden' });
    } finally {
      await g.close();
    }
    expect(await state(t)).toEqual(before);

    // The spec's answers stay: a bad body is still 400, and not enough credits still 402.
    expect((await svc.api('POST', '/api/v1/images/text-to-image', { key: t.key, body: { model: 'fast' } })).status).toBe(400);
    const poor = await svc.team({ name: 'Pro poor', tier: 'pro', credits: 0 });
    expect((await upload(poor, await paddedPng(QUOTA))).status).toBe(201);
    expect((await svc.api('POST', '/api/v1/images/text-to-image', { key: poor.key, body: { model: 'fast', prompt: 'a shoe', aspect_ratio: '1:1' } })).status).toBe(402);

    // Freeing space lets it through again.
    const [u] = (await svc.api('GET', '/api/v1/uploads', { key: t.key })).body.data;
    await sql`update uploads set expires_at = now() - interval '1 minute' where id = ${u.id}`.execute(svc.app.db);
    await svc.app.services.uploads.deleteExpired();
    expect((await svc.api('POST', '/api/v1/images/text-to-image', { key: t.key, body: { model: 'fast', prompt: 'a shoe', aspect_ratio: '1:1' } })).status).toBe(202);
  });
});

describe('after all of it', () => {
  it("a team's deletion takes its counters to zero, and every team's counters are the sums of its rows' sizes", async () => {
    expect((await usage(b)).total_bytes).toBeGreaterThan(0);
    await svc.app.services.teamDeleter.remove(b.teamId);
    expect(await svc.app.services.storageUsage.get(b.teamId)).toMatchObject({ total_bytes: 0 });
    const { rows } = await sql<{ team_id: string; counted: string; summed: string }>`
      with sums as (
        select team_id, sum(o) as o, sum(i) as i, sum(u) as u from (
          select team_id, output_bytes as o, input_bytes as i, 0 as u from generations
          union all select team_id, audio_bytes, 0, 0 from voiceovers
          union all select team_id, 0, image_bytes, 0 from products
          union all select team_id, 0, image_bytes, 0 from avatars where team_id is not null
          union all select team_id, 0, 0, size from uploads where status = 'ready') x group by team_id)
      select coalesce(s.team_id, t.team_id) as team_id,
        concat_ws('/', t.outputs_bytes, t.inputs_bytes, t.uploads_bytes) as counted,
        concat_ws('/', coalesce(s.o, 0), coalesce(s.i, 0), coalesce(s.u, 0)) as summed
      from sums s full join team_storage t using (team_id)`.execute(svc.app.db);
    expect(rows.length).toBeGreaterThanOrEqual(5);
    for (const r of rows) expect(r.counted ?? '0/0/0', r.team_id).toBe(r.summed);
  });
});
