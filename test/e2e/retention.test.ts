import fs from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expireGenerationFilesStatement } from '../../src/repositories/retention.ts';
import { operatorActor } from '../../src/services/audit.ts';
import { startTestService, type TestService } from '../support/app.ts';
import { runCli, stdoutJson } from '../support/cli-run.ts';
import { signedInUser } from '../support/dashboard-session.ts';
import { graphqlClient } from '../support/graphql-client.ts';
import { pngBytes } from '../support/image-host.ts';

// Two servers: one whose operator keeps files 30 days (RETENTION_DAYS) and scraped ad media 60
// days, one with neither set. No worker: generations are ended through the lifecycle with files
// put in storage the way the runner puts them, and aged by moving their created_at back.
let svc: TestService;
let forever: TestService;
let gql: Awaited<ReturnType<typeof graphqlClient>>;
let png: Buffer;

beforeAll(async () => {
  png = await pngBytes(32, 32, '#2244aa');
  svc = await startTestService({ RETENTION_DAYS: '30', AD_MEDIA_RETENTION_DAYS: '60' });
  forever = await startTestService();
  gql = await graphqlClient(svc);
});
afterAll(async () => {
  await gql?.close();
  await svc?.close();
  await forever?.close();
});

type Team = Awaited<ReturnType<TestService['team']>>;
interface Made {
  id: string;
  keys: string[];
  links: string[];
}

/** A text-to-image generation `age` days old: completed with `files` results (and the input copy a provider run keeps), failed, or processing. */
async function generation(s: TestService, t: Team, age: number, end: 'completed' | 'failed' | 'processing' = 'completed', files = 2): Promise<Made> {
  const res = await s.api('POST', '/api/v1/images/text-to-image', { key: t.key, body: { model: 'fast', prompt: `a shoe ${age}`, aspect_ratio: '1:1', quantity: files } });
  expect(res.status, res.text).toBe(202);
  const id: string = res.body.generation_id;
  const keys: string[] = [];
  if (end === 'completed') {
    for (let i = 1; i <= files; i++) keys.push(`generations/${t.teamId}/${id}/${i}.png`);
    for (const k of keys) await s.app.storage.put(k, png, 'image/png');
    expect(await s.app.services.lifecycle.complete(id, keys, {})).toBeTruthy();
  } else if (end === 'failed') {
    expect(await s.app.services.lifecycle.fail(id, 'the provider refused the prompt')).toBeTruthy();
  }
  if (end !== 'processing') {
    keys.push(`upstream-inputs/${id}/speech.mp3`);
    await s.app.storage.put(keys.at(-1)!, Buffer.from('ID3 speech'), 'audio/mpeg');
  }
  await sql`update generations set created_at = now() - make_interval(days => ${age}) where id = ${id}`.execute(s.app.db);
  const links = end === 'completed' ? (await s.api('GET', `/api/v1/generations/${id}`, { key: t.key })).body.result_urls : [];
  return { id, keys, links };
}

const onDisk = (s: TestService, key: string) => fs.existsSync(path.join(s.dataDir, 'files', key));
const expectKept = (s: TestService, g: Made) => g.keys.forEach((k) => expect(onDisk(s, k), k).toBe(true));
const expectGone = (s: TestService, g: Made) => g.keys.forEach((k) => expect(onDisk(s, k), k).toBe(false));
const gqlData = async (query: string, variables: Record<string, unknown>, key: string) => {
  const res = await gql.gql(query, variables, key);
  expect(res.body.errors, JSON.stringify(res.body.errors)).toBeUndefined();
  return res.body.data;
};
const auditLines = (s: TestService, teamId: string) =>
  s.app.db.selectFrom('audit_log' as never).selectAll().where('team_id' as never, '=', teamId as never).where('action' as never, '=', 'retention.changed' as never).orderBy('id' as never).execute() as Promise<any[]>;
const SET = `mutation ($days: Int) { setTeamRetention(days: $days) {
  __typename ... on MutationSetTeamRetentionSuccess { data { days team_days server_days } } ... on AppError { code message } } }`;

describe('retention: the daily job', () => {
  it("removes exactly the files of ended generations older than the team's retention (the server's 30 days, a team's own 10); the generation stays readable with its details, result_url null and files_expired_at, through REST and GraphQL", async () => {
    const a = await svc.team();
    const b = await svc.team();
    const ownerB = await signedInUser(svc, b.teamId, 'owner');
    expect((await ownerB.gql(SET, { days: 10 })).body.data.setTeamRetention.data).toEqual({ days: 10, team_days: 10, server_days: 30 });

    const aOld = await generation(svc, a, 40);
    const aOldFailed = await generation(svc, a, 40, 'failed');
    const aOldProcessing = await generation(svc, a, 40, 'processing');
    const aYoung = await generation(svc, a, 20);
    const bOld = await generation(svc, b, 20);
    const bYoung = await generation(svc, b, 5);
    for (const g of [aOld, aOldFailed, aYoung, bOld, bYoung]) expectKept(svc, g);
    for (const link of aOld.links) expect((await svc.fetchUrl(link)).status).toBe(200);
    const before = (await svc.api('GET', `/api/v1/generations/${aOld.id}`, { key: a.key })).body;

    const run = await svc.app.services.retention.run();
    expect(run).toMatchObject({ generations: 3, ad_media: 0, files: 3 + 1 + 3 });
    expectGone(svc, aOld);
    expectGone(svc, aOldFailed);
    expectGone(svc, bOld);
    expectKept(svc, aYoung);
    expectKept(svc, bYoung);

    // REST: the same generation, status and details as before, no links, and when they went.
    const after = (await svc.api('GET', `/api/v1/generations/${aOld.id}`, { key: a.key })).body;
    expect(after).toMatchObject({ id: aOld.id, status: 'completed', result_url: null, result_urls: [], error: null, details: before.details, credits: before.credits, completed_at: before.completed_at });
    expect(Date.parse(after.files_expired_at)).toBeGreaterThan(Date.now() - 60_000);
    expect(before.files_expired_at).toBeNull();
    const failed = (await svc.api('GET', `/api/v1/generations/${aOldFailed.id}`, { key: a.key })).body;
    expect(failed).toMatchObject({ status: 'failed', error: 'the provider refused the prompt', result_url: null });
    expect(failed.files_expired_at).toEqual(expect.any(String));
    const processing = (await svc.api('GET', `/api/v1/generations/${aOldProcessing.id}`, { key: a.key })).body;
    expect(processing).toMatchObject({ status: 'processing', files_expired_at: null });
    const young = (await svc.api('GET', `/api/v1/generations/${aYoung.id}`, { key: a.key })).body;
    expect(young.result_urls).toHaveLength(2);
    expect(young.files_expired_at).toBeNull();
    // Operators (`adforge generation show`) see it too.
    expect((await svc.app.services.generationReader.operatorView(aOld.id)).files_expired_at).toBe(after.files_expired_at);
    const list = (await svc.api('GET', '/api/v1/generations?status=completed', { key: a.key })).body.data;
    expect(list.find((g: any) => g.id === aOld.id)).toMatchObject({ result_url: null, files_expired_at: after.files_expired_at });

    // GraphQL: the same representation.
    const data = await gqlData(`query ($id: ID!) { generation(id: $id) { status result_url result_urls error files_expired_at details { ... on ImageDetails { prompt } } } }`, { id: aOld.id }, a.key);
    expect(data.generation).toMatchObject({ status: 'completed', result_url: null, result_urls: [], error: null, files_expired_at: after.files_expired_at, details: { prompt: 'a shoe 40' } });

    // A link signed before the run: the spec's error shape, saying why.
    const link = await svc.fetchUrl(aOld.links[0]!);
    expect(link.status).toBe(404);
    const body = JSON.parse(link.bytes.toString());
    expect(body.error.code).toBe('not_found');
    expect(body.error.message).toMatch(/retention period/);

    // A video edit cannot start from a generation whose files are gone.
    const ai = await generation(svc, a, 45);
    await sql`update generations set type = 'ai-video', kind = 'video' where id = ${ai.id}`.execute(svc.app.db);
    await svc.app.services.retention.run();
    const edit = await svc.api('POST', '/api/v1/videos/edit', { key: a.key, body: { generation_id: ai.id, template_id: 'bold-pop' } });
    expect([edit.status, edit.body.error?.code], edit.text).toEqual([400, 'validation_error']);
    expect(edit.body.error.message).toMatch(/generation_id.*retention/);

    // Idempotent: a second run finds nothing and changes nothing.
    const again = await svc.app.services.retention.run();
    expect(again).toMatchObject({ generations: 0, files: 0 });
    expect((await svc.api('GET', `/api/v1/generations/${aOld.id}`, { key: a.key })).body.files_expired_at).toBe(after.files_expired_at);
    expectKept(svc, aYoung);
    expectKept(svc, bYoung);
  });

  it('works in batches: a run with more generations than one batch removes them all, each batch in its own transaction', async () => {
    const t = await svc.team();
    const made: Made[] = [];
    for (let i = 0; i < 5; i++) made.push(await generation(svc, t, 31 + i, 'completed', 1));
    const run = await svc.app.services.retention.run({ batchSize: 2 });
    expect(run.generations).toBe(5);
    expect(run.batches).toBeGreaterThanOrEqual(3);
    for (const g of made) expectGone(svc, g);
    const rows = await svc.app.db.selectFrom('generations').select(['files_expired_at', 'result_keys']).where('team_id', '=', t.teamId).execute();
    expect(rows.every((r) => r.files_expired_at !== null && r.result_keys.length === 0)).toBe(true);
    // The files job for anything storage missed was queued in the same transactions.
    const jobs = await sql<{ n: number }>`select count(*)::int as n from graphile_worker.jobs where task_identifier = 'delete_stored_files'`.execute(svc.app.db);
    expect(jobs.rows[0]!.n).toBeGreaterThanOrEqual(3);
  });

  it("each batch reads the index of generations whose files are still kept, not the whole table", async () => {
    const t = await svc.team();
    // A team with years of history whose old files went long ago: 5,000 generations already expired, a few still kept.
    const seed = await generation(svc, t, 40, 'completed', 1);
    await sql`insert into generations (team_id, api_key_id, operation, type, kind, status, params, credits, result_keys, result_meta, created_at, completed_at, deadline_at, files_expired_at)
      select team_id, api_key_id, operation, type, kind, status, params, credits, '{}', result_meta, created_at - make_interval(days => n), completed_at - make_interval(days => n), deadline_at, now()
      from generations, generate_series(1, 5000) as n where id = ${seed.id}`.execute(svc.app.db);
    await sql`analyze generations`.execute(svc.app.db);
    const plan = await svc.app.db.transaction().execute(async (trx) => {
      const { rows } = await sql<{ 'QUERY PLAN': string }>`explain ${expireGenerationFilesStatement(t.teamId, new Date(), 500)}`.execute(trx);
      return rows.map((r) => r['QUERY PLAN']).join('\n');

    });
    expect(plan, plan).toMatch(/Index (Only )?Scan using generations_files_kept on generations g/);
  });

  it('with RETENTION_DAYS unset nothing is deleted, until a team sets its own', async () => {
    const t = await forever.team();
    const old = await generation(forever, t, 3000);
    expect(await forever.app.services.retention.run()).toMatchObject({ generations: 0, files: 0 });
    expectKept(forever, old);
    expect((await forever.api('GET', `/api/v1/generations/${old.id}`, { key: t.key })).body.files_expired_at).toBeNull();

    // No server limit: any number of days is a shorter one.
    expect(await forever.app.services.retention.set(t.teamId, { days: 365 }, operatorActor())).toEqual({ days: 365, team_days: 365, server_days: null });
    expect(await forever.app.services.retention.run()).toMatchObject({ generations: 1 });
    expectGone(forever, old);
  });

  it('scraped ad media follow AD_MEDIA_RETENTION_DAYS: our copies older than it are removed (r2_url null), newer ones kept', async () => {
    const t = await svc.team();
    const brand = await svc.app.db
      .insertInto('ad_library_brands')
      .values({ meta_page_id: 'retention-page', name: 'Old brand', page_url: 'https://example.com/p', profile_picture_key: 'ad-library/brands/retention-page/profile.png', scraped_at: new Date(), updated_at: new Date(Date.now() - 70 * 86_400_000) })
      .returning('id')
      .executeTakeFirstOrThrow();
    const ad = (archive: string, days: number) => ({
      brand_id: brand.id,
      ad_archive_id: archive,
      is_active: true,
      start_date: new Date(),
      body_text: '',
      title: '',
      cta_text: '',
      cta_type: '',
      link_url: '',
      display_format: 'IMAGE',
      publisher_platforms: [],
      media: JSON.stringify([{ type: 'image', url: 'https://example.com/a.png', key: `ad-library/ads/${archive}/0.png` }]),
      thumbnail_url: '',
      eu_total_reach: 0,
      updated_at: new Date(Date.now() - days * 86_400_000),
    });
    const [oldAd, newAd] = await svc.app.db.insertInto('ad_library_ads').values([ad('ret-old', 61), ad('ret-new', 10)]).returning('id').execute();
    for (const k of ['ad-library/brands/retention-page/profile.png', 'ad-library/ads/ret-old/0.png', 'ad-library/ads/ret-new/0.png']) await svc.app.storage.put(k, png, 'image/png');
    const oldLink = (await svc.api('GET', `/api/v1/ad-library/ads/${oldAd!.id}`, { key: t.key })).body.media[0].r2_url;

    const run = await svc.app.services.retention.run();
    expect(run.ad_media).toBe(2);
    expect(onDisk(svc, 'ad-library/ads/ret-old/0.png')).toBe(false);
    expect(onDisk(svc, 'ad-library/brands/retention-page/profile.png')).toBe(false);
    expect(onDisk(svc, 'ad-library/ads/ret-new/0.png')).toBe(true);
    expect((await svc.api('GET', `/api/v1/ad-library/ads/${oldAd!.id}`, { key: t.key })).body.media).toEqual([{ type: 'image', r2_url: null }]);
    expect((await svc.api('GET', `/api/v1/ad-library/ads/${newAd!.id}`, { key: t.key })).body.media[0].r2_url).toEqual(expect.any(String));
    expect((await svc.api('GET', `/api/v1/ad-library/brands/${brand.id}`, { key: t.key })).body.profile_picture_url).toBeNull();
    const gone = await svc.fetchUrl(oldLink);
    expect(gone.status).toBe(404);
    expect(JSON.parse(gone.bytes.toString()).error.message).toMatch(/60 days/);
    expect((await svc.app.services.retention.run()).ad_media).toBe(0);
  });
});

describe("retention: the team's setting", () => {
  it('owners set a shorter one over GraphQL, never longer than the server\'s; members and keys read it and cannot change it; bad input changes nothing', async () => {
    const t = await svc.team();
    const owner = await signedInUser(svc, t.teamId, 'owner');
    const member = await signedInUser(svc, t.teamId, 'member');
    const read = `{ team { retention { days team_days server_days } } }`;
    expect((await member.gql(read)).body.data.team.retention).toEqual({ days: 30, team_days: null, server_days: 30 });

    const longer = (await owner.gql(SET, { days: 31 })).body.data.setTeamRetention;
    expect(longer).toMatchObject({ __typename: 'AppError', code: 'validation_error' });
    expect(longer.message).toMatch(/at most 30/);
    for (const days of [0, -1, 36_501]) expect((await owner.gql(SET, { days })).body.data.setTeamRetention).toMatchObject({ code: 'validation_error' });
    expect((await owner.gql(`mutation { setTeamRetention { __typename ... on AppError { code } } }`)).body.data.setTeamRetention).toMatchObject({ code: 'validation_error' });
    expect((await member.gql(read)).body.data.team.retention.team_days).toBeNull();

    expect((await member.gql(SET, { days: 7 })).body.data.setTeamRetention).toMatchObject({ code: 'forbidden' });
    expect((await gql.gql(SET, { days: 7 }, t.key)).body.data.setTeamRetention).toMatchObject({ code: 'forbidden' });
    expect((await member.gql(read)).body.data.team.retention.team_days).toBeNull();

    // Nothing refused above wrote an audit line.
    expect(await auditLines(svc, t.teamId)).toEqual([]);

    expect((await owner.gql(SET, { days: 7 })).body.data.setTeamRetention.data).toEqual({ days: 7, team_days: 7, server_days: 30 });
    expect((await gqlData(read, {}, t.key)).team.retention).toEqual({ days: 7, team_days: 7, server_days: 30 });
    // Setting what is set changes nothing and records nothing.
    expect((await owner.gql(SET, { days: 7 })).body.data.setTeamRetention.data).toEqual({ days: 7, team_days: 7, server_days: 30 });
    expect((await owner.gql(SET, { days: null })).body.data.setTeamRetention.data).toEqual({ days: 30, team_days: null, server_days: 30 });
    const lines = await auditLines(svc, t.teamId);
    expect(lines.map((l) => [l.actor_kind, l.actor_email, l.detail])).toEqual([
      ['user', owner.email, { team_days_before: null, team_days_after: 7, days_after: 7, server_days: 30 }],
      ['user', owner.email, { team_days_before: 7, team_days_after: null, days_after: 30, server_days: 30 }],
    ]);
  });

  it('operators: adforge team retention --team ID --days N | --clear, refused past RETENTION_DAYS', async () => {
    const t = await svc.team();
    const env = { DATABASE_URL: svc.databaseUrl, DATA_DIR: svc.dataDir, LOG_LEVEL: 'silent', RETENTION_DAYS: '30' };
    const cli = (args: string[]) => runCli(['team', 'retention', '--team', t.teamId, ...args, '--json'], env, { timeoutMs: 60_000 });

    const refused = await cli(['--days', '45']);
    expect(refused.code).toBe(1);
    expect(refused.stderr + refused.stdout).toMatch(/at most 30/);
    expect((await svc.app.services.retention.get(t.teamId)).team_days).toBeNull();

    const set = await cli(['--days', '14']);
    expect(set.code, set.stderr).toBe(0);
    expect(stdoutJson(set)).toEqual({ team_id: t.teamId, days: 14, team_days: 14, server_days: 30 });
    expect(stdoutJson(await cli([]))).toMatchObject({ days: 14 });
    const cleared = await cli(['--clear']);
    expect(stdoutJson(cleared)).toEqual({ team_id: t.teamId, days: 30, team_days: null, server_days: 30 });
    expect((await cli(['--days', '3', '--clear'])).code).toBe(1);
    const lines = await auditLines(svc, t.teamId);
    expect(lines.map((l) => [l.actor_kind, l.detail.team_days_after])).toEqual([
      ['operator', 14],
      ['operator', null],
    ]);
    expect(lines[0].actor_name).toMatch(/^adforge CLI/);
  });
});
