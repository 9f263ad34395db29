import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { parse } from 'csv-parse/sync';
import { sql } from 'kysely';
import { extract } from 'tar-stream';
import { createClient, type Client } from 'graphql-ws';
import { Agent, request } from 'undici';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadTls } from '../../src/http/tls.ts';
import { KEPT_AFTER_TEAM_DELETION } from '../../src/services/team-deletion.ts';
import { startTestService, type TestService } from '../support/app.ts';
import { runCli, stdoutJson } from '../support/cli-run.ts';
import { signedInUser, type DashboardSession } from '../support/dashboard-session.ts';
import { graphqlClient } from '../support/graphql-client.ts';
import { pngBytes, sendBytes, startImageHost } from '../support/image-host.ts';
import { startS3Server } from '../support/s3-server.ts';
import { startWebhookReceiver } from '../support/webhook-receiver.ts';

// A team with something of everything, exported and then deleted through the CLI, on disk storage
// and on S3 (s3rver): the archive checked file by file, the deletion checked table by table (every
// table with a team_id, read from information_schema, so a table added later is covered too).

type Team = Awaited<ReturnType<TestService['team']>>;

async function untar(archive: Buffer): Promise<Map<string, Buffer>> {
  const files = new Map<string, Buffer>();
  const ex = extract();
  const done = new Promise<void>((resolve, reject) => {
    ex.on('entry', (header, stream, next) => {
      const chunks: Buffer[] = [];
      stream.on('data', (c: unknown) => chunks.push(c as Buffer));
      stream.on('end', () => {
        files.set(header.name, Buffer.concat(chunks));
        next();
      });
      stream.resume();
    });
    ex.on('finish', () => resolve());
    ex.on('error', reject);
  });
  Readable.from([archive]).pipe(createGunzip()).pipe(ex as unknown as NodeJS.WritableStream);
  await done;
  return files;
}

const S3_ENV = (endpoint: string) => ({
  STORAGE: 's3',
  S3_BUCKET: 'adforge-team-data',
  S3_ENDPOINT: endpoint,
  S3_ACCESS_KEY_ID: 'S3RVER',
  S3_SECRET_ACCESS_KEY: 'S3RVER',
  S3_FORCE_PATH_STYLE: 'true',
});

/** `generationsUpdated` on a client, live once an event came through; resolves `ended` when the server ends it. */
async function liveSubscription(ws: Client, makeOne: () => Promise<void>): Promise<{ ended: Promise<string> }> {
  let first!: () => void;
  const live = new Promise<void>((r) => (first = r));
  const ended = new Promise<string>((resolve) => {
    ws.subscribe(
      { query: 'subscription { generationsUpdated { id status } }' },
      {
        next: () => first(),
        error: (e: any) => resolve(`error ${e?.code ?? ''} ${e?.reason ?? e?.message ?? JSON.stringify(e)}`),
        complete: () => resolve('complete'),
      },
    );
  });
  for (let i = 0; i < 50; i++) {
    await makeOne();
    if (await Promise.race([live.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 200))])) return { ended };
  }
  throw new Error('the subscription never received an event');
}

describe.each(['disk', 's3'] as const)('team export and deletion, storage on %s', (storageKind) => {
  let s3: Awaited<ReturnType<typeof startS3Server>> | undefined;
  let svc: TestService;
  let host: Awaited<ReturnType<typeof startImageHost>>;
  let hook: Awaited<ReturnType<typeof startWebhookReceiver>>;
  let env: Record<string, string>;
  let png: Buffer;
  let work: string;

  beforeAll(async () => {
    png = await pngBytes(48, 48, '#884422');
    host = await startImageHost({ '/p.png': sendBytes(png, 'image/png'), '/face.png': sendBytes(await pngBytes(64, 64, '#c0a080'), 'image/png') });
    hook = await startWebhookReceiver();
    env = {};
    if (storageKind === 's3') {
      s3 = await startS3Server('adforge-team-data');
      env = S3_ENV(s3.endpoint);
    }
    svc = await startTestService({ ...env, OWNER_TOP_UP: 'true' });
    work = await mkdtemp(path.join(os.tmpdir(), 'adforge-team-data-test-'));
  });
  afterAll(async () => {
    await svc?.close();
    await s3?.close();
    await hook?.close();
    await host?.close();
    if (work) await rm(work, { recursive: true, force: true });
  });

  const cli = (args: string[]) => runCli(args, { DATABASE_URL: svc.databaseUrl, DATA_DIR: svc.dataDir, LOG_LEVEL: 'silent', ...env }, { timeoutMs: 40_000 });

  /** Every key in storage now. */
  async function storedKeys(): Promise<Set<string>> {
    const keys = new Set<string>();
    if (storageKind === 's3') {
      const client = new S3Client({ region: 'us-east-1', endpoint: s3!.endpoint, forcePathStyle: true, credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } });
      let token: string | undefined;
      do {
        const page = await client.send(new ListObjectsV2Command({ Bucket: 'adforge-team-data', ContinuationToken: token }));
        for (const o of page.Contents ?? []) keys.add(o.Key!);
        token = page.NextContinuationToken;
      } while (token);
      client.destroy();
      return keys;
    }
    const root = path.join(svc.dataDir, 'files');
    for (const entry of await readdir(root, { recursive: true, withFileTypes: true }).catch(() => [])) {
      if (!entry.isFile()) continue;
      const rel = path.relative(root, path.join(entry.parentPath, entry.name)).split(path.sep).join('/');
      if (rel.split('/').some((s) => s.startsWith('.'))) continue;
      keys.add(rel);
    }
    return keys;
  }

  /** A completed text-to-image with two results in storage, as the runner leaves it. */
  async function completed(t: Team): Promise<string> {
    const res = await svc.api('POST', '/api/v1/images/text-to-image', { key: t.key, body: { model: 'fast', prompt: 'a red shoe', aspect_ratio: '1:1', quantity: 2 } });
    expect(res.status, res.text).toBe(202);
    const id = res.body.generation_id;
    const keys = [1, 2].map((i) => `generations/${t.teamId}/${id}/${i}.png`);
    for (const [i, k] of keys.entries()) await svc.app.storage.put(k, await pngBytes(32 + i, 32, '#2255aa'), 'image/png');
    expect(await svc.app.services.lifecycle.complete(id, keys, {})).toBeTruthy();
    return id;
  }

  /** The team of the tests: keys, webhook, a member, products, brand, avatar, generations of every state, a campaign, deliveries. */
  async function populated() {
    const t = await svc.team({ name: `Acme ${storageKind}`, credits: 500 });
    await svc.app.services.teams.setWebhook(t.keyId, hook.url);
    const owner = await signedInUser(svc, t.teamId, 'owner');
    const topUp = await owner.gql('mutation { topUpCredits(credits: 50) { __typename } }');
    expect(JSON.stringify(topUp.body)).not.toContain('AppError');
    const product = await svc.api('POST', '/api/v1/products', { key: t.key, body: { name: 'Bottle', description: 'Steel bottle', category: 'outdoor', image_url: host.url('/p.png') } });
    expect(product.status, product.text).toBe(201);
    await svc.app.services.brands.create(t.teamId, { name: 'Acme', description: 'outdoor gear' });
    const avatar = await svc.api('POST', '/api/v1/avatars/custom', { key: t.key, body: { name: 'Founder', image_url: host.url('/face.png') } });
    expect(avatar.status, avatar.text).toBe(201);
    const done = await completed(t);
    await svc.app.services.webhooks.deliverFor(done);
    const shot = await svc.api('POST', '/api/v1/images/product-shots', { key: t.key, body: { model: 'fast', aspect_ratio: '1:1', product_id: product.body.id, style_id: 'studio-white' } });
    expect(shot.status, shot.text).toBe(202);
    const shotKey = `generations/${t.teamId}/${shot.body.generation_id}/1.png`;
    await svc.app.storage.put(shotKey, png, 'image/png');
    await svc.app.services.lifecycle.complete(shot.body.generation_id, [shotKey], {});
    const failed = await svc.api('POST', '/api/v1/images/text-to-image', { key: t.key, body: { model: 'fast', prompt: 'a blue shoe', aspect_ratio: '1:1' } });
    await svc.api('POST', `/api/v1/generations/${failed.body.generation_id}/cancel`, { key: t.key });
    const processing = await svc.api('POST', '/api/v1/images/text-to-image', { key: t.key, body: { model: 'fast', prompt: 'a green shoe', aspect_ratio: '1:1' } });
    const p = { teamId: t.teamId, keyId: t.keyId };
    const campaign = await svc.app.services.campaigns.open(p, 'Spring');
    await svc.app.services.campaigns.addRows(p, campaign.id, [{ row_number: 1, cells: { type: 'text-to-image', row_key: 'hero', prompt: 'a red sneaker', model: 'fast', aspect_ratio: '1:1', quantity: '1' } }]);
    await svc.app.services.webhooks.sendTest(p);
    const agent = new Agent({ connect: { ca: (await loadTls(svc.app.config)).cert } });
    const up = await request(`${svc.baseUrl}/api/v1/uploads`, { method: 'POST', dispatcher: agent, headers: { authorization: `Bearer ${t.key}`, 'content-type': 'image/png' }, body: png });
    const upload = JSON.parse(await up.body.text());
    expect(up.statusCode, JSON.stringify(upload)).toBe(201);
    await agent.close();
    return {
      upload, t, owner, product: product.body, avatar: avatar.body, done, shot: shot.body.generation_id, failed: failed.body.generation_id, processing: processing.body.generation_id, campaign };
  }

  it('adforge team export: one archive with every part, files byte-identical to what the API serves, CSV lines matching the ledger, no secret anywhere', { timeout: 120_000 }, async () => {
    const s = await populated();
    const out = path.join(work, `export-${storageKind}.tar.gz`);
    const r = await cli(['team', 'export', '--team', s.t.teamId, '--out', out, '--json']);
    expect(r.code, r.stderr + r.stdout).toBe(0);
    const summary = stdoutJson(r);
    expect(summary).toMatchObject({ team_id: s.t.teamId, generations: 4, missing_files: 0, file: out });
    const raw = await readFile(out);
    const files = await untar(raw);
    const { rows: audit } = await sql<{ action: string; actor_kind: string }>`select action, actor_kind from audit_log where team_id = ${s.t.teamId} and action like 'team.%'`.execute(svc.app.db);
    expect(audit).toEqual([{ action: 'team.export_started', actor_kind: 'operator' }]);

    for (const name of ['README.txt', 'team.json', 'ledger.csv', 'products.json', 'brands.json', 'avatars.json', 'voiceovers.json', 'campaigns.json', 'members.json', 'api-keys.json', 'webhook-deliveries.json', 'deleted-generations.json', 'credit-top-ups.json', 'ad-library-scrapes.json']) {
      expect(files.has(name), name).toBe(true);
    }
    // Every JSON file parses.
    for (const [name, bytes] of files) if (name.endsWith('.json')) expect(() => JSON.parse(bytes.toString('utf8')), name).not.toThrow();
    const readme = files.get('README.txt')!.toString();
    for (const name of ['ledger.csv', 'generations/<id>.json', 'api-keys.json', 'webhook-deliveries.json']) expect(readme).toContain(name);

    // Generations: one JSON each, its files byte for byte what its result_urls serve.
    const list = (await svc.api('GET', '/api/v1/generations?limit=100', { key: s.t.key })).body.data;
    expect(list).toHaveLength(4);
    for (const g of list) {
      const j = JSON.parse(files.get(`generations/${g.id}.json`)!.toString());
      expect(j).toMatchObject({ id: g.id, type: g.type, status: g.status });
      expect(j.files).toHaveLength(g.result_urls.length);
      for (const [i, url] of g.result_urls.entries()) {
        const served = await svc.fetchUrl(url);
        expect(served.status).toBe(200);
        expect(files.get(j.files[i])!.equals(served.bytes), j.files[i]).toBe(true);
      }
    }
    // Products and avatars: their images as the API serves them.
    const products = JSON.parse(files.get('products.json')!.toString());
    expect(products).toHaveLength(1);
    expect(files.get(products[0].image_file)!.equals((await svc.fetchUrl((await svc.api("GET", `/api/v1/products/${s.product.id}`, { key: s.t.key })).body.image_url)).bytes)).toBe(true);
    const avatars = JSON.parse(files.get('avatars.json')!.toString());
    const served = (await svc.api('GET', '/api/v1/avatars/custom', { key: s.t.key })).body.data;
    expect(avatars.map((a: { id: string }) => a.id)).toEqual(served.map((a: { id: string }) => a.id));
    expect(files.get(avatars[0].image_file)!.equals((await svc.fetchUrl(served[0].thumbnail_url)).bytes)).toBe(true);

    // The ledger: every line of GET /account/ledger, the same values, oldest first.
    const ledger = (await svc.api('GET', '/api/v1/account/ledger?limit=100', { key: s.t.key })).body.data.reverse();
    const csv = parse(files.get('ledger.csv')!, { columns: true }) as Record<string, string>[];
    expect(csv).toHaveLength(ledger.length);
    for (const [i, line] of ledger.entries()) {
      expect(csv[i]).toEqual({
        id: line.id,
        created_at: line.created_at,
        kind: line.kind,
        amount: String(line.amount),
        generation_id: line.generation_id ?? '',
        subject_type: line.subject_type ?? '',
        subject_id: line.subject_id ?? '',
        note: line.note ?? '',
        credits_used_after: String(line.credits_used_after),
      });
    }

    const campaigns = JSON.parse(files.get('campaigns.json')!.toString());
    expect(campaigns).toMatchObject([{ id: s.campaign.id, name: 'Spring', rows: [{ row_number: 1, row_key: 'hero', type: 'text-to-image' }] }]);
    const members = JSON.parse(files.get('members.json')!.toString());
    expect(members.map((m: { email: string }) => m.email)).toEqual([s.owner.email]);
    const keys = JSON.parse(files.get('api-keys.json')!.toString());
    expect(keys).toMatchObject([{ id: s.t.keyId, hint: expect.any(String), webhook_url: hook.url }]);
    const uploads = JSON.parse(files.get('uploads.json')!.toString());
    expect(uploads).toMatchObject([{ id: s.upload.id, content_type: 'image/png' }]);
    expect(files.get(uploads[0].file)!.equals(png)).toBe(true);
    const deliveries = JSON.parse(files.get('webhook-deliveries.json')!.toString());
    expect(deliveries.map((d: { event: string }) => d.event).sort()).toEqual(['generation.completed', 'webhook.test']);

    // No secret, no digest, no password hash in any file (nor in the archive's compressed bytes).
    const { rows: secrets } = await sql<{ webhook_secret: string; digest: string }>`select webhook_secret, encode(key_digest, 'hex') as digest from api_keys where team_id = ${s.t.teamId}`.execute(svc.app.db);
    const { rows: hashes } = await sql<{ password_hash: string }>`select password_hash from users where team_id = ${s.t.teamId}`.execute(svc.app.db);
    const needles = [s.t.key, s.t.webhookSecret, secrets[0]!.webhook_secret, secrets[0]!.digest, s.owner.password, hashes[0]!.password_hash, s.t.webhookSecret.slice('whsec_'.length)];
    for (const [name, bytes] of files) for (const n of needles) expect(bytes.includes(n), `${name} holds a secret`).toBe(false);
    for (const n of needles) expect(raw.includes(n)).toBe(false);
  });

  it("GraphQL, owners only: startTeamExport, teamExport, downloadTeamExport once (a signed link to the same archive), then deleteTeam behind the team's name", { timeout: 120_000 }, async () => {
    const t = await svc.team({ name: `Owners ${storageKind}`, credits: 100 });
    const owner = await signedInUser(svc, t.teamId, 'owner');
    const member = await signedInUser(svc, t.teamId, 'member');
    const id = await completed(t);
    const start = `mutation { startTeamExport { __typename ... on MutationStartTeamExportSuccess { data { id status } } ... on AppError { code message } } }`;

    const refused = await member.gql(start);
    expect(refused.body.data.startTeamExport).toMatchObject({ __typename: 'AppError', code: 'forbidden' });
    const byKey = await svc.api('POST', '/graphql', { key: t.key, body: { query: start } });
    expect(JSON.stringify(byKey.body)).toContain('forbidden');

    const started = (await owner.gql(start)).body.data.startTeamExport;
    expect(started.data.status).toBe('processing');
    const again = (await owner.gql(start)).body.data.startTeamExport;
    expect(again).toMatchObject({ __typename: 'AppError', code: 'conflict' });
    // The job's work, as the worker runs it (this service has no worker).
    await svc.app.jobs.teamExports.run(started.data.id);
    const read = await owner.gql(`query ($id: ID!) { teamExport(id: $id) { status size available_until downloaded_at } }`, { id: started.data.id });
    expect(read.body.data.teamExport).toMatchObject({ status: 'completed', downloaded_at: null });
    expect(read.body.data.teamExport.size).toBeGreaterThan(100);

    const download = `mutation ($id: ID!) { downloadTeamExport(id: $id) { __typename ... on MutationDownloadTeamExportSuccess { data { url expires_at } } ... on AppError { code message } } }`;
    expect((await member.gql(download, { id: started.data.id })).body.data.downloadTeamExport.code).toBe('forbidden');
    const link = (await owner.gql(download, { id: started.data.id })).body.data.downloadTeamExport.data;
    expect(new Date(link.expires_at).getTime()).toBeGreaterThan(Date.now());
    const fetched = await svc.fetchUrl(link.url);
    expect(fetched.status).toBe(200);
    const files = await untar(fetched.bytes);
    const g = (await svc.api('GET', `/api/v1/generations/${id}`, { key: t.key })).body;
    const j = JSON.parse(files.get(`generations/${id}.json`)!.toString());
    for (const [i, url] of g.result_urls.entries()) expect(files.get(j.files[i])!.equals((await svc.fetchUrl(url)).bytes)).toBe(true);
    for (const [name, bytes] of files) for (const n of [t.key, t.webhookSecret]) expect(bytes.includes(n), name).toBe(false);
    expect((await owner.gql(download, { id: started.data.id })).body.data.downloadTeamExport).toMatchObject({ __typename: 'AppError', code: 'conflict' });
    const archiveKey = `exports/${t.teamId}/${started.data.id}.tar.gz`;
    expect(await svc.app.storage.get(archiveKey)).not.toBeNull();

    const del = `mutation ($name: String!) { deleteTeam(confirm_name: $name) { __typename ... on MutationDeleteTeamSuccess { data { team_id generations_deleted keys_revoked kept } } ... on AppError { code message } } }`;
    expect((await member.gql(del, { name: t.teamId })).body.data.deleteTeam.code).toBe('forbidden');
    const wrong = (await owner.gql(del, { name: 'owners' })).body.data.deleteTeam;
    expect(wrong).toMatchObject({ __typename: 'AppError', code: 'validation_error' });
    expect((await svc.api('GET', '/api/v1/account/credits', { key: t.key })).status).toBe(200);
    const deleted = (await owner.gql(del, { name: `Owners ${storageKind}` })).body.data.deleteTeam;
    expect(deleted.data).toMatchObject({ team_id: t.teamId, generations_deleted: 1, keys_revoked: 1, kept: [...KEPT_AFTER_TEAM_DELETION] });
    expect((await svc.api('GET', '/api/v1/account/credits', { key: t.key })).status).toBe(401);
    expect((await owner.gql('{ viewer { email } }')).body.data?.viewer ?? null).toBeNull();
    expect(await svc.app.storage.get(archiveKey)).toBeNull();
    const { rows: audit } = await sql<{ action: string; actor_kind: string }>`select action, actor_kind from audit_log where team_id = ${t.teamId} and action like 'team.%' order by id`.execute(svc.app.db);
    expect(audit).toEqual([
      { action: 'team.export_started', actor_kind: 'user' },
      { action: 'team.deletion_started', actor_kind: 'user' },
    ]);
  });

  it.runIf(storageKind === 'disk')("the deleted team's open subscriptions end, a key's and an owner session's, when another process deletes it", async () => {
    const t = await svc.team({ name: 'Subscribed', credits: 100 });
    const owner: DashboardSession = await signedInUser(svc, t.teamId, 'owner');
    const client = await graphqlClient(svc);
    const ca = (await loadTls(svc.app.config)).cert;
    class CookieWebSocket extends WebSocket {
      constructor(address: string, protocols?: string | string[]) {
        super(address, protocols, { ca, headers: { cookie: owner.cookie } });
      }
    }
    const byKey = client.ws(t.key);
    const bySession = createClient({ url: client.url.replace(/^https/, 'wss'), webSocketImpl: CookieWebSocket, connectionParams: { csrfToken: owner.csrf }, retryAttempts: 0, lazy: true });
    const makeOne = async () => {
      const res = await svc.api('POST', '/api/v1/images/text-to-image', { key: t.key, body: { model: 'fast', prompt: 'watched', aspect_ratio: '1:1' } });
      await svc.app.services.lifecycle.fail(res.body.generation_id, 'ended by the test');
    };
    try {
      const keyEnded = await liveSubscription(byKey, makeOne);
      const sessionEnded = await liveSubscription(bySession, makeOne);
      const r = await cli(['team', 'delete', '--team', t.teamId, '--yes', '--json']);
      expect(r.code, r.stderr + r.stdout).toBe(0);
      const within = <T,>(p: Promise<T>) => Promise.race([p, new Promise<null>((resolve) => setTimeout(() => resolve(null), 5000))]);
      expect(await within(keyEnded.ended), 'the key subscription is still open').not.toBeNull();
      expect(await within(sessionEnded.ended), 'the session subscription is still open').not.toBeNull();
    } finally {
      await byKey.dispose();
      await bySession.dispose();
      await client.close();
    }
  });

  it('adforge team delete: keys answer 401 at once, processing work is cancelled and refunded, no row of the team is left but the kept ones, no file of it in storage, another team untouched; running it again changes nothing', async () => {
    const before = await storedKeys();
    const s = await populated();
    const other = await svc.team({ name: 'Other', credits: 100 });
    const theirs = await completed(other);
    const theirsProduct = await svc.api('POST', '/api/v1/products', { key: other.key, body: { name: 'Cup', description: 'Cup', category: 'home', image_url: host.url('/p.png') } });
    const afterPopulating = await storedKeys();
    const { rows: otherKeyRows } = await sql<{ k: string }>`select unnest(result_keys) as k from generations where team_id = ${other.teamId} union all select image_key from products where team_id = ${other.teamId}`.execute(svc.app.db);
    const otherKeys = new Set(otherKeyRows.map((r) => r.k));
    const teamKeys = [...afterPopulating].filter((k) => !before.has(k) && !otherKeys.has(k));
    expect(teamKeys.length).toBe(6);
    const ledgerBefore = (await sql<{ n: number }>`select count(*)::int as n from credit_ledger where team_id = ${s.t.teamId}`.execute(svc.app.db)).rows[0]!.n;

    expect((await svc.api('GET', '/api/v1/account/credits', { key: s.t.key })).status).toBe(200);
    const refused = await cli(['team', 'delete', '--team', s.t.teamId]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('not deleted');
    expect((await svc.api('GET', '/api/v1/account/credits', { key: s.t.key })).status).toBe(200);

    const r = await cli(['team', 'delete', '--team', s.t.teamId, '--yes', '--json']);
    expect(r.code, r.stderr + r.stdout).toBe(0);
    const out = stdoutJson(r);
    expect(out).toMatchObject({ team_id: s.t.teamId, generations_cancelled: 1, generations_deleted: 4, keys_revoked: 1, sessions_ended: 1 });

    // The key and the session answer 401 right after (the CLI is another process: the notice reached this server).
    const afterKey = await svc.api('GET', '/api/v1/account/credits', { key: s.t.key });
    expect([afterKey.status, afterKey.body.error.code]).toEqual([401, 'unauthorized']);
    const afterSession = await s.owner.gql('{ viewer { email } }');
    expect(afterSession.body.errors?.length, JSON.stringify(afterSession.body)).toBeGreaterThan(0);
    expect(afterSession.body.data?.viewer ?? null).toBeNull();

    // The ledger's lines stay, without the email a top-up line quoted.
    const { rows: notes } = await sql<{ note: string }>`select note from credit_ledger where team_id = ${s.t.teamId} and subject_type = 'user'`.execute(svc.app.db);
    expect(notes).toHaveLength(1);
    expect(notes[0]!.note).toMatch(/^top-up \+50 by user [0-9a-f-]{36}: limit 500 -> 550$/);
    expect(notes[0]!.note).not.toContain(s.owner.email);
    // The processing generation was cancelled and refunded: its refund is in the kept ledger.
    const { rows: refund } = await sql<{ n: number }>`select count(*)::int as n from credit_ledger where subject_id = ${s.processing} and kind = 'refund'`.execute(svc.app.db);
    expect(refund[0]!.n).toBe(1);
    const ledgerAfter = (await sql<{ n: number }>`select count(*)::int as n from credit_ledger where team_id = ${s.t.teamId}`.execute(svc.app.db)).rows[0]!.n;
    expect(ledgerAfter).toBe(ledgerBefore + 1);

    // Every table with a team_id: nothing of the team but in the kept ones.
    const { rows: tables } = await sql<{ table_name: string }>`select c.table_name from information_schema.columns c join information_schema.tables t using (table_schema, table_name)
      where c.table_schema = current_schema() and c.column_name = 'team_id' and t.table_type = 'BASE TABLE'`.execute(svc.app.db);
    expect(tables.length).toBeGreaterThan(10);
    for (const { table_name } of tables) {
      if ((KEPT_AFTER_TEAM_DELETION as readonly string[]).includes(table_name)) continue;
      const n = (await sql<{ n: number }>`select count(*)::int as n from ${sql.table(table_name)} where team_id = ${s.t.teamId}`.execute(svc.app.db)).rows[0]!.n;
      expect(n, table_name).toBe(0);
    }
    // Rows that reach the team through another table: webhook deliveries of its key and generations, sessions, links.
    expect((await sql<{ n: number }>`select count(*)::int as n from webhook_deliveries where api_key_id = ${s.t.keyId} or generation_id in (${s.done}, ${s.shot})`.execute(svc.app.db)).rows[0]!.n).toBe(0);
    expect((await sql<{ n: number }>`select count(*)::int as n from campaign_rows where campaign_id = ${s.campaign.id}`.execute(svc.app.db)).rows[0]!.n).toBe(0);
    // What stays: the tombstone, the ledger, the generation tombstones.
    const { rows: team } = await sql<{ deleted_at: Date | null; name: string }>`select deleted_at, name from teams where id = ${s.t.teamId}`.execute(svc.app.db);
    expect(team[0]!.deleted_at).toBeInstanceOf(Date);
    expect((await sql<{ n: number }>`select count(*)::int as n from deleted_generations where team_id = ${s.t.teamId}`.execute(svc.app.db)).rows[0]!.n).toBe(4);

    // No file of the team in storage; the other team's all there.
    const after = await storedKeys();
    for (const k of teamKeys) expect(after.has(k), k).toBe(false);
    for (const k of otherKeys) expect(after.has(k), k).toBe(true);

    // The other team is untouched and still works.
    expect((await svc.api('GET', `/api/v1/generations/${theirs}`, { key: other.key })).status).toBe(200);
    expect((await svc.api('GET', `/api/v1/products/${theirsProduct.body.id}`, { key: other.key })).status).toBe(200);

    // A deleted team is gone for the admin paths too, and a second run changes nothing.
    const key = await cli(['key', 'create', '--team', s.t.teamId, '--json']);
    expect(stdoutJson(key).error.code).toBe('not_found');
    const again = await cli(['team', 'delete', '--team', s.t.teamId, '--yes', '--json']);
    expect(again.code, again.stderr + again.stdout).toBe(0);
    expect(stdoutJson(again)).toMatchObject({ team_id: s.t.teamId, deleted_at: out.deleted_at, generations_cancelled: 0, generations_deleted: 0, keys_revoked: 0, rows_deleted: {} });
    expect((await sql<{ n: number }>`select count(*)::int as n from credit_ledger where team_id = ${s.t.teamId}`.execute(svc.app.db)).rows[0]!.n).toBe(ledgerAfter);
    const { rows: audit } = await sql<{ action: string; actor_kind: string }>`select action, actor_kind from audit_log where team_id = ${s.t.teamId} and action like 'team.%' order by id`.execute(svc.app.db);
    expect(audit).toEqual([
      { action: 'team.deletion_started', actor_kind: 'operator' },
      { action: 'team.deletion_started', actor_kind: 'operator' },
    ]);
    const exported = await cli(['team', 'export', '--team', s.t.teamId, '--out', path.join(work, 'gone.tar.gz'), '--json']);
    expect(stdoutJson(exported).error.code).toBe('not_found');
  });
});
