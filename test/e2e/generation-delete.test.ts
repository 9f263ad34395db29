import fs from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VOICES } from '../../src/domain/catalogue/voices.ts';
import { startTestService, type TestService } from '../support/app.ts';
import { graphqlClient } from '../support/graphql-client.ts';
import { pngBytes, sendBytes, startImageHost } from '../support/image-host.ts';
import { startWebhookReceiver } from '../support/webhook-receiver.ts';

// No worker: a generation is ended here by the lifecycle itself, with files put in storage the way
// the runner puts them, so each test decides what is processing and what has ended.
let svc: TestService;
let gql: Awaited<ReturnType<typeof graphqlClient>>;
let host: Awaited<ReturnType<typeof startImageHost>>;
let hook: Awaited<ReturnType<typeof startWebhookReceiver>>;
let png: Buffer;

beforeAll(async () => {
  png = await pngBytes(64, 64, '#22aa44');
  host = await startImageHost({ '/p.png': sendBytes(png, 'image/png') });
  hook = await startWebhookReceiver();
  svc = await startTestService();
  gql = await graphqlClient(svc);
});
afterAll(async () => {
  await gql?.close();
  await svc?.close();
  await hook?.close();
  await host?.close();
});

type Team = Awaited<ReturnType<TestService['team']>>;
const image = { model: 'fast', prompt: 'a shoe', aspect_ratio: '1:1', quantity: 2 };

async function create(t: Team, p = '/api/v1/images/text-to-image', body: Record<string, unknown> = image): Promise<string> {
  const res = await svc.api('POST', p, { key: t.key, body });
  expect(res.status, res.text).toBe(202);
  return res.body.generation_id;
}

/** Completes a processing generation with files in storage, as the runner does; answers their keys. */
async function complete(t: Team, id: string, files = 2): Promise<string[]> {
  const keys = Array.from({ length: files }, (_, i) => `generations/${t.teamId}/${id}/${i + 1}.png`);
  for (const k of keys) await svc.app.storage.put(k, png, 'image/png');
  expect(await svc.app.services.lifecycle.complete(id, keys, {})).toBeTruthy();
  return keys;
}

const rowsOf = async (table: 'generations' | 'generation_products' | 'generation_avatars' | 'webhook_deliveries' | 'upstream_jobs', id: string) => {
  const column = table === 'generations' ? sql.ref('id') : sql.ref('generation_id');
  return (await sql<{ n: number }>`select count(*)::int as n from ${sql.table(table)} where ${column} = ${id}`.execute(svc.app.db)).rows[0]!.n;
};
const stored = async (key: string) => (await svc.app.storage.get(key)) !== null;
const onDisk = (key: string) => fs.existsSync(path.join(svc.dataDir, 'files', key));
const gqlData = async (key: string, query: string, variables: Record<string, unknown> = {}) => {
  const res = await gql.gql(query, variables, key);
  expect(res.body.errors, JSON.stringify(res.body.errors)).toBeUndefined();
  return res.body.data;
};

describe('DELETE /api/v1/generations/{id}', () => {
  it('deletes an ended generation: its rows, files, input copy, webhook deliveries and product link; the ledger keeps its lines; the product can then be deleted', async () => {
    const t = await svc.team({ credits: 100 });
    await svc.app.services.teams.setWebhook(t.keyId, hook.url);
    const product = await svc.api('POST', '/api/v1/products', { key: t.key, body: { name: 'Bottle', description: 'Steel bottle', category: 'outdoor', image_url: host.url('/p.png') } });
    expect(product.status).toBe(201);
    const id = await create(t, '/api/v1/images/product-shots', { model: 'fast', aspect_ratio: '1:1', product_id: product.body.id, style_id: 'studio-white' });
    const keys = await complete(t, id, 1);
    // The spoken script a provider was sent is kept for this generation alone.
    const inputCopy = `upstream-inputs/${id}/speech.mp3`;
    await svc.app.storage.put(inputCopy, Buffer.from('ID3 speech'), 'audio/mpeg');
    await svc.app.services.webhooks.deliverFor(id);
    expect(await rowsOf('webhook_deliveries', id)).toBe(1);
    expect(await rowsOf('generation_products', id)).toBe(1);
    const debit = (await svc.api('GET', `/api/v1/account/ledger?generation_id=${id}`, { key: t.key })).body.data;
    expect(debit).toHaveLength(1);

    const inUse = await svc.api('DELETE', `/api/v1/products/${product.body.id}`, { key: t.key });
    expect([inUse.status, inUse.body.error.code]).toEqual([409, 'conflict']);

    for (const k of [...keys, inputCopy]) expect(onDisk(k), k).toBe(true);
    const res = await svc.api('DELETE', `/api/v1/generations/${id}`, { key: t.key });
    expect([res.status, res.text]).toEqual([204, '']);

    expect((await svc.api('GET', `/api/v1/generations/${id}`, { key: t.key })).status).toBe(404);
    expect((await svc.api('GET', '/api/v1/generations', { key: t.key })).body.data.map((g: any) => g.id)).not.toContain(id);
    for (const table of ['generations', 'generation_products', 'webhook_deliveries', 'upstream_jobs'] as const) expect(await rowsOf(table, id), table).toBe(0);
    for (const k of [...keys, inputCopy]) {
      expect(await stored(k), k).toBe(false);
      expect(onDisk(k), k).toBe(false);
    }
    // Money history: the debit line is still there, naming the generation; the spending chart still knows its type.
    const ledger = (await svc.api('GET', `/api/v1/account/ledger?generation_id=${id}`, { key: t.key })).body.data;
    expect(ledger).toEqual(debit);
    expect(ledger[0]).toMatchObject({ kind: 'debit', generation_id: id, subject_type: 'generation', subject_id: id });
    const spent = await svc.app.services.credits.spending({ teamId: t.teamId, keyId: t.keyId }, { days: 1 });
    expect(spent.map((s) => s.kind)).toEqual(['product-shots']);
    expect((await svc.api('GET', '/api/v1/account/credits', { key: t.key })).body.credits_used).toBe(debit[0].amount);

    expect((await svc.api('DELETE', `/api/v1/products/${product.body.id}`, { key: t.key })).status).toBe(204);
    expect((await svc.api('DELETE', `/api/v1/generations/${id}`, { key: t.key })).status).toBe(404);
  });

  it('a webhook being sent while its generation is deleted ends quietly: no record, no failure', async () => {
    const t = await svc.team({ credits: 100 });
    await svc.app.services.teams.setWebhook(t.keyId, hook.url);
    const id = await create(t);
    await complete(t, id);
    // The receiver holds its answer until the generation is gone.
    let answer!: () => void;
    const held = new Promise<void>((r) => (answer = r));
    hook.setAnswer((res) => void held.then(() => res.writeHead(200).end('ok')));
    try {
      const delivering = svc.app.services.webhooks.deliverFor(id);
      for (let i = 0; i < 100 && !hook.received.some((r) => r.raw.toString().includes(id)); i++) await new Promise((r) => setTimeout(r, 20));
      expect((await svc.api('DELETE', `/api/v1/generations/${id}`, { key: t.key })).status).toBe(204);
      answer();
      await expect(delivering).resolves.toBeUndefined();
    } finally {
      hook.setAnswer((res) => res.writeHead(200).end('ok'));
    }
    expect(await rowsOf('webhook_deliveries', id)).toBe(0);
  });

  it('frees a custom avatar: it can be deleted once the generation that used it is', async () => {
    const t = await svc.team({ credits: 500 });
    const avatar = await svc.api('POST', '/api/v1/avatars/custom', { key: t.key, body: { name: 'Mine', image_url: host.url('/p.png') } });
    expect(avatar.status).toBe(201);
    const id = await create(t, '/api/v1/videos/talking-avatar', { avatar_id: avatar.body.id, avatar_type: 'custom', script: 'Hello there.', voice_id: VOICES[0]!.id });
    await svc.app.services.lifecycle.fail(id, 'failed on its own');
    expect((await svc.api('DELETE', `/api/v1/avatars/custom/${avatar.body.id}`, { key: t.key })).status).toBe(409);
    expect((await svc.api('DELETE', `/api/v1/generations/${id}`, { key: t.key })).status).toBe(204);
    expect(await rowsOf('generation_avatars', id)).toBe(0);
    expect((await svc.api('DELETE', `/api/v1/avatars/custom/${avatar.body.id}`, { key: t.key })).status).toBe(204);
  });

  it('a processing generation is 409 and says to cancel it first; another team\'s and a missing one are 404; a malformed id is 400; nothing changes', async () => {
    const t = await svc.team({ credits: 100 });
    const other = await svc.team();
    const processing = await create(t);
    const res = await svc.api('DELETE', `/api/v1/generations/${processing}`, { key: t.key });
    expect([res.status, res.body.error.code]).toEqual([409, 'conflict']);
    expect(res.body.error.message).toMatch(/cancel it first/);
    expect((await svc.api('DELETE', `/api/v1/generations/${processing}`, { key: other.key })).body.error.code).toBe('not_found');
    expect((await svc.api('DELETE', '/api/v1/generations/00000000-0000-4000-8000-000000000000', { key: t.key })).status).toBe(404);
    const bad = await svc.api('DELETE', '/api/v1/generations/nope', { key: t.key });
    const badProduct = await svc.api('DELETE', '/api/v1/products/nope', { key: t.key });
    expect([bad.status, bad.body]).toEqual([400, badProduct.body]);
    expect(await rowsOf('generations', processing)).toBe(1);

    // Cancelled, it has ended: then it can go.
    expect((await svc.api('POST', `/api/v1/generations/${processing}/cancel`, { key: t.key })).status).toBe(200);
    expect((await svc.api('DELETE', `/api/v1/generations/${processing}`, { key: t.key })).status).toBe(204);
  });

  it('the source of a video edit still processing is 409 until the edit ends', async () => {
    const t = await svc.team({ credits: 100 });
    const source = await create(t, '/api/v1/videos/ai-video', { model: 'veo-3.1-fast', prompt: 'a stream', aspect_ratio: '16:9', duration: 8 });
    await complete(t, source, 1);
    const edit = await create(t, '/api/v1/videos/edit', { template_id: 'bold-pop', generation_id: source });
    const res = await svc.api('DELETE', `/api/v1/generations/${source}`, { key: t.key });
    expect([res.status, res.body.error.message]).toEqual([409, expect.stringMatching(/video edit still processing/)]);
    await svc.app.services.lifecycle.fail(edit, 'failed on its own');
    expect((await svc.api('DELETE', `/api/v1/generations/${source}`, { key: t.key })).status).toBe(204);
  });

  it('honours Idempotency-Key: a repeat answers 204 again (replayed), not 404', async () => {
    const t = await svc.team({ credits: 100 });
    const id = await create(t);
    await complete(t, id);
    const headers = { 'idempotency-key': `delete-${id}` };
    const first = await svc.api('DELETE', `/api/v1/generations/${id}`, { key: t.key, headers });
    expect(first.status).toBe(204);
    const again = await svc.api('DELETE', `/api/v1/generations/${id}`, { key: t.key, headers });
    expect([again.status, again.headers['idempotent-replayed']]).toEqual([204, 'true']);
    expect((await svc.api('DELETE', `/api/v1/generations/${id}`, { key: t.key })).status).toBe(404);
  });

  it('a file that cannot be deleted now neither fails the request nor keeps the row: a queued job deletes it later', async () => {
    const t = await svc.team({ credits: 100 });
    const id = await create(t);
    const keys = await complete(t, id);
    const storage = svc.app.storage;
    const original = storage.delete;
    storage.delete = async () => {
      throw new Error('storage is down');
    };
    try {
      expect((await svc.api('DELETE', `/api/v1/generations/${id}`, { key: t.key })).status).toBe(204);
    } finally {
      storage.delete = original;
    }
    expect(await rowsOf('generations', id)).toBe(0);
    for (const k of keys) expect(await stored(k)).toBe(true);
    expect(svc.logLines.some((l) => l.includes(keys[0]!) && l.includes('could not be deleted now'))).toBe(true);
    const jobs = await sql<{ payload: { keys: string[] }; run_at: Date }>`select j.payload, j.run_at from graphile_worker._private_jobs j join graphile_worker._private_tasks t on t.id = j.task_id where t.identifier = 'delete_stored_files'`.execute(svc.app.db);
    const job = jobs.rows.find((j) => j.payload.keys.includes(keys[0]!));
    expect(job?.payload.keys).toEqual(expect.arrayContaining(keys));
    expect(job!.run_at.getTime()).toBeGreaterThan(Date.now());
    // What the job runs.
    await svc.app.jobs.storedFiles.deleteFiles(job!.payload.keys);
    for (const k of keys) expect(await stored(k)).toBe(false);
  });
});

describe('campaign results after a delete', () => {
  it('a row whose generation was deleted says so, keeps its id and credits, and the counts do not move', async () => {
    const t = await svc.team({ credits: 100 });
    const CAMPAIGN = 'id counts { total completed failed processing credits_spent }';
    const { openCampaign } = await gqlData(t.key, `mutation { openCampaign(name: "spring") { ... on MutationOpenCampaignSuccess { data { id } } } }`);
    const cid = openCampaign.data.id;
    const rows = [
      { row_number: 2, cells: { type: 'text-to-image', row_key: 'hero', prompt: 'a red sneaker', model: 'fast', aspect_ratio: '1:1', quantity: '2' } },
      { row_number: 3, cells: { type: 'text-to-image', row_key: 'side', prompt: 'a blue sneaker', model: 'fast', aspect_ratio: '1:1', quantity: '1' } },
    ];
    await gqlData(t.key, `mutation ($id: ID!, $rows: [CampaignRowInput!]!) { addCampaignRows(campaign_id: $id, rows: $rows) { __typename } }`, { id: cid, rows });
    await gqlData(t.key, `mutation ($id: ID!) { startCampaign(id: $id) { __typename } }`, { id: cid });
    await svc.app.runners.campaigns.run(cid);
    const ROWS = `query ($id: ID!) { campaign(id: $id) { ${CAMPAIGN} rows(limit: 10) { items { row_number status credits generation_id result_url error } } } }`;
    const before = (await gqlData(t.key, ROWS, { id: cid })).campaign;
    const [hero, side] = before.rows.items.map((r: any) => r.generation_id);
    await complete(t, hero);
    await complete(t, side, 1);
    const done = (await gqlData(t.key, ROWS, { id: cid })).campaign;
    expect(done.counts).toMatchObject({ total: 2, completed: 2, credits_spent: 3 });

    expect((await svc.api('DELETE', `/api/v1/generations/${hero}`, { key: t.key })).status).toBe(204);
    const after = (await gqlData(t.key, ROWS, { id: cid })).campaign;
    expect(after.counts).toEqual(done.counts);
    expect(after.rows.items[0]).toEqual({ row_number: 2, status: 'deleted', credits: 2, generation_id: hero, result_url: null, error: 'the generation was deleted (it had completed)' });
    expect(after.rows.items[1]).toMatchObject({ row_number: 3, status: 'completed', generation_id: side });
  });
});

describe('GraphQL deleteGeneration and deleteGenerations', () => {
  const ONE = `mutation ($id: ID!, $key: String) { deleteGeneration(id: $id, idempotencyKey: $key) { ... on MutationDeleteGenerationSuccess { data { id } } ... on AppError { code message } } }`;
  const MANY = `mutation ($ids: [ID!], $filter: GenerationDeleteFilter) { deleteGenerations(ids: $ids, filter: $filter) { ... on MutationDeleteGenerationsSuccess { data { deleted skipped not_found has_more } } ... on AppError { code message } } }`;

  it('deleteGeneration: deleted, or the errors REST gives (processing, another team\'s, malformed)', async () => {
    const t = await svc.team({ credits: 100 });
    const other = await svc.team();
    const done = await create(t);
    const keys = await complete(t, done);
    const processing = await create(t);
    expect((await gqlData(other.key, ONE, { id: done })).deleteGeneration.code).toBe('not_found');
    expect((await gqlData(t.key, ONE, { id: processing })).deleteGeneration).toEqual({ code: 'conflict', message: expect.stringMatching(/cancel it first/) });
    expect((await gqlData(t.key, ONE, { id: 'nope' })).deleteGeneration.code).toBe('validation_error');
    expect((await gqlData(t.key, ONE, { id: done, key: 'k1' })).deleteGeneration).toEqual({ data: { id: done } });
    expect((await gqlData(t.key, ONE, { id: done, key: 'k1' })).deleteGeneration).toEqual({ data: { id: done } });
    expect((await gqlData(t.key, ONE, { id: done })).deleteGeneration.code).toBe('not_found');
    for (const k of keys) expect(await stored(k)).toBe(false);
    expect(await rowsOf('generations', processing)).toBe(1);
  });

  it('deleteGenerations by ids: ended ones deleted, processing ones skipped, others\' and missing ones counted and untouched', async () => {
    const t = await svc.team({ credits: 100 });
    const other = await svc.team({ credits: 100 });
    const a = await create(t);
    const aKeys = await complete(t, a);
    const b = await create(t);
    await svc.app.services.lifecycle.fail(b, 'failed on its own');
    const running = await create(t);
    const theirs = await create(other);
    const theirKeys = await complete(other, theirs);
    const missing = '00000000-0000-4000-8000-000000000000';
    const res = (await gqlData(t.key, MANY, { ids: [a, b, running, theirs, missing, a] })).deleteGenerations;
    expect(res).toEqual({ data: { deleted: 2, skipped: 1, not_found: 2, has_more: false } });
    expect([await rowsOf('generations', a), await rowsOf('generations', b), await rowsOf('generations', running), await rowsOf('generations', theirs)]).toEqual([0, 0, 1, 1]);
    for (const k of aKeys) expect(await stored(k)).toBe(false);
    for (const k of theirKeys) expect(await stored(k)).toBe(true);
    expect((await svc.api('GET', `/api/v1/generations/${theirs}`, { key: other.key })).status).toBe(200);

    const tooMany = Array.from({ length: 101 }, () => missing);
    expect((await gqlData(t.key, MANY, { ids: tooMany })).deleteGenerations.code).toBe('validation_error');
    expect((await gqlData(t.key, MANY, { ids: [a], filter: { status: 'failed' } })).deleteGenerations.code).toBe('validation_error');
    expect((await gqlData(t.key, MANY, {})).deleteGenerations.code).toBe('validation_error');
  });

  it('deleteGenerations by filter: status, type and created_before, only the team\'s, processing ones skipped and counted', async () => {
    const t = await svc.team({ credits: 500 });
    const other = await svc.team({ credits: 100 });
    const old = await create(t);
    await complete(t, old);
    await sql`update generations set created_at = now() - interval '10 days' where id = ${old}`.execute(svc.app.db);
    const failed = await create(t);
    await svc.app.services.lifecycle.fail(failed, 'failed on its own');
    const recent = await create(t);
    await complete(t, recent);
    const video = await create(t, '/api/v1/videos/ai-video', { model: 'veo-3.1-fast', prompt: 'a stream', aspect_ratio: '16:9', duration: 8 });
    await complete(t, video, 1);
    const running = await create(t);
    const theirsFailed = await create(other);
    await svc.app.services.lifecycle.fail(theirsFailed, 'failed on its own');

    expect((await gqlData(t.key, MANY, { filter: { status: 'failed' } })).deleteGenerations.data).toEqual({ deleted: 1, skipped: 0, not_found: 0, has_more: false });
    expect(await rowsOf('generations', failed)).toBe(0);
    expect(await rowsOf('generations', theirsFailed)).toBe(1);

    const before = new Date(Date.now() - 86_400_000).toISOString();
    expect((await gqlData(t.key, MANY, { filter: { created_before: before } })).deleteGenerations.data).toMatchObject({ deleted: 1, skipped: 0 });
    expect(await rowsOf('generations', old)).toBe(0);

    expect((await gqlData(t.key, MANY, { filter: { type: 'image' } })).deleteGenerations.data).toEqual({ deleted: 1, skipped: 1, not_found: 0, has_more: false });
    expect([await rowsOf('generations', recent), await rowsOf('generations', running), await rowsOf('generations', video)]).toEqual([0, 1, 1]);

    expect((await gqlData(t.key, MANY, { filter: { created_before: 'yesterday' } })).deleteGenerations.code).toBe('validation_error');
    expect((await gqlData(t.key, MANY, { filter: {} })).deleteGenerations.data).toEqual({ deleted: 1, skipped: 1, not_found: 0, has_more: false });
    expect([await rowsOf('generations', video), await rowsOf('generations', running), await rowsOf('generations', theirsFailed)]).toEqual([0, 1, 1]);
    // Money history stays whole: every debit and refund of the team is still in the ledger.
    const ledger = (await svc.api('GET', '/api/v1/account/ledger?limit=100', { key: t.key })).body.data;
    expect(ledger.filter((l: any) => l.kind === 'debit').map((l: any) => l.generation_id).sort()).toEqual([old, failed, recent, video, running].sort());
  });
});
