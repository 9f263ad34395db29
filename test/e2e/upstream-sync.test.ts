import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VOICES } from '../../src/domain/catalogue/voices.ts';
import { graphqlClient } from '../support/graphql-client.ts';
import { testVideo, videoInfo } from '../support/media-probe.ts';
import { startSyncFake } from '../support/sync-fake.ts';
import { startTestService, waitForGeneration, type TestService } from '../support/app.ts';

// Polls are a minute apart: sync's signed webhook is what finishes these generations within seconds.
const SYNC_KEY = 'sync-test-key-6d2f90aa';
const SECRET = 'whsec_test_0f3a9b';
const VOICE_ID = VOICES[1]!.id;
let sync: Awaited<ReturnType<typeof startSyncFake>>;
let video: Buffer;
let svc: TestService;
let t: Awaited<ReturnType<TestService['team']>>;
let avatarId: string;

beforeAll(async () => {
  video = await testVideo({ width: 160, height: 90, seconds: 1 });
  sync = await startSyncFake({ key: SYNC_KEY, webhookSecret: SECRET, video, pollsUntilDone: 1_000, webhookAfterMs: 200 });
  svc = await startTestService(
    { SYNC_API_KEY: SYNC_KEY, SYNC_API_URL: sync.url, SYNC_WEBHOOK_SECRET: SECRET, ENGINE_ROUTES: 'lipsync-2.0=sync,*=local', UPSTREAM_POLL_MS: '60000' },
    { worker: true },
  );
  t = await svc.team({ credits: 100_000 });
  avatarId = (await svc.app.db.selectFrom('avatars').select('id').where('avatar_type', '=', 'platform').orderBy('name').executeTakeFirstOrThrow()).id;
});
afterAll(async () => {
  await svc?.close();
  await sync?.close();
});

const post = (path: string, body: Record<string, unknown>) => svc.api('POST', `/api/v1${path}`, { key: t.key, body });
const used = async () => (await svc.app.db.selectFrom('teams').select('credits_used').where('id', '=', t.teamId).executeTakeFirstOrThrow()).credits_used;
const submitOf = async (generationId: string) => {
  const job = await svc.app.db.selectFrom('upstream_jobs').select('provider_job_id').where('generation_id', '=', generationId).executeTakeFirstOrThrow();
  return sync.submits.find((s) => s.id === job.provider_job_id)!;
};

describe('talking avatars on sync.so (lipsync-2.0)', () => {
  it('sends lipsync-2 with our speech and the avatar as a still video of its length; the signed webhook finishes it', async () => {
    const started = Date.now();
    const res = await post('/videos/talking-avatar', { avatar_id: avatarId, avatar_type: 'platform', script: 'Our voice, their lips.', voice_id: VOICE_ID, lipsync_model: 'lipsync-2.0' });
    expect(res.status).toBe(202);
    const g = await waitForGeneration(svc, t.key, res.body.generation_id, 30_000);
    expect(g.status, g.error).toBe('completed');
    expect(Date.now() - started).toBeLessThan(30_000);
    expect((await svc.fetchUrl(g.result_url)).bytes.equals(video)).toBe(true);
    const sent = await submitOf(res.body.generation_id);
    expect(sent).toMatchObject({ model: 'lipsync-2', options: { sync_mode: 'cut_off' }, webhookUrl: `${svc.baseUrl}/hooks/sync`, videoType: 'video/mp4', audioType: 'audio/mpeg' });
    const speech = (await svc.app.storage.get(`upstream-inputs/${res.body.generation_id}/speech.mp3`))!.bytes;
    expect(sent.audio.equals(speech)).toBe(true);
    const [face, voice] = await Promise.all([videoInfo(sent.video), videoInfo(speech)]);
    expect(face.videoCodec).toBe('h264');
    expect(Math.abs(face.durationSeconds! - voice.durationSeconds!)).toBeLessThan(0.2);
    expect(sync.hooksSent.filter((h) => h.body.includes(sent.id)).map((h) => h.status)).toEqual([200]);
  });

  it("a voiceover through GraphQL: sync receives that voiceover's bytes", async () => {
    const vo = await post('/voiceovers/text-to-speech', { text: 'Said once, synced once.', voice_id: VOICE_ID });
    const row = await svc.app.db.selectFrom('voiceovers').select('audio_key').where('id', '=', vo.body.id).executeTakeFirstOrThrow();
    const client = await graphqlClient(svc);
    const res = await client.gql(
      `mutation ($input: TalkingAvatarInput!) { createTalkingAvatarVideo(input: $input) { ... on MutationCreateTalkingAvatarVideoSuccess { data { generation_id } } ... on AppError { code message } } }`,
      { input: { avatar_id: avatarId, avatar_type: 'platform', voiceover_id: vo.body.id, lipsync_model: 'lipsync-2.0' } },
      t.key,
    );
    await client.close();
    const id = res.body.data?.createTalkingAvatarVideo?.data?.generation_id;
    expect(id, JSON.stringify(res.body)).toBeTruthy();
    expect((await waitForGeneration(svc, t.key, id, 30_000)).status).toBe('completed');
    expect((await submitOf(id)).audio.equals((await svc.app.storage.get(row.audio_key))!.bytes)).toBe(true);
  });

  it('a failed sync generation fails with its message and is refunded', async () => {
    const before = await used();
    sync.failNext('No face was found in the input video');
    const res = await post('/videos/talking-avatar', { avatar_id: avatarId, avatar_type: 'platform', script: 'This one fails.', voice_id: VOICE_ID, lipsync_model: 'lipsync-2.0' });
    const g = await waitForGeneration(svc, t.key, res.body.generation_id, 30_000);
    expect(g.status).toBe('failed');
    expect(g.error).toBe('sync could not make the video: No face was found in the input video');
    expect(await used()).toBe(before);
  });

  // docs.sync.so get-generate: status is also REJECTED or CANCELED, each final, with sync's reason in `error`.
  it.each([
    ['REJECTED', 'The input video violates the content policy', 'sync rejected the video: The input video violates the content policy'],
    ['CANCELED', 'The generation was canceled', 'sync canceled the video: The generation was canceled'],
  ] as const)('a %s sync generation fails at once with sync\'s reason and is refunded', async (status, reason, message) => {
    const before = await used();
    sync.endNext({ status, error: reason, errorCode: status === 'REJECTED' ? 'content_moderation_rejected' : 'generation_canceled' });
    const res = await post('/videos/talking-avatar', { avatar_id: avatarId, avatar_type: 'platform', script: `This one is ${status}.`, voice_id: VOICE_ID, lipsync_model: 'lipsync-2.0' });
    const g = await waitForGeneration(svc, t.key, res.body.generation_id, 30_000);
    expect(g.status).toBe('failed');
    expect(g.error).toBe(message);
    expect(await used()).toBe(before);
  });
});

describe('a sync submit whose answer was lost', () => {
  let quiet: TestService;
  let q: Awaited<ReturnType<TestService['team']>>;
  beforeAll(async () => {
    // No worker: the worker that lost the answer, and the retry of its job, are played by hand.
    quiet = await startTestService({ SYNC_API_KEY: SYNC_KEY, SYNC_API_URL: sync.url, SYNC_WEBHOOK_SECRET: SECRET, ENGINE_ROUTES: 'lipsync-2.0=sync,*=local', UPSTREAM_POLL_MS: '60000' });
    q = await quiet.team({ credits: 10_000 });
  });
  afterAll(async () => quiet?.close());

  it('is sent again with the same Idempotency-Key (our attempt id): sync makes one generation, and the attempt holds its id', async () => {
    const res = await quiet.api('POST', '/api/v1/videos/talking-avatar', { key: q.key, body: { avatar_id: avatarId, avatar_type: 'platform', script: 'Lost on the way back.', voice_id: VOICE_ID, lipsync_model: 'lipsync-2.0' } });
    expect(res.status).toBe(202);
    const id = res.body.generation_id as string;
    const [posts, made] = [sync.posts.length, sync.submits.length];
    sync.dropNextAnswer();
    // The job's first run: sync took it, the answer never came. The attempt stays, to be sent again later under its key, not failed.
    await quiet.app.runners.generations.run(id, { number: 1, max: 5 });
    const again = await sql<{ n: number }>`select count(*)::int n from graphile_worker._private_jobs j join graphile_worker._private_tasks t on t.id = j.task_id where t.identifier = 'run_generation' and j.payload->>'generation_id' = ${id}`.execute(quiet.app.db);
    expect(again.rows[0]!.n).toBe(1);
    await quiet.app.runners.generations.run(id, { number: 2, max: 5 });
    const attempts = await quiet.app.db.selectFrom('upstream_jobs').selectAll().where('generation_id', '=', id).execute();
    expect(attempts).toHaveLength(1);
    expect(attempts[0]).toMatchObject({ state: 'submitted', provider_job_id: sync.submits.at(-1)!.id });
    expect(sync.posts.slice(posts).map((p) => p.idempotencyKey)).toEqual([attempts[0]!.id, attempts[0]!.id]);
    expect(sync.posts.slice(posts).map((p) => p.answered)).toEqual(['dropped', 201]);
    // The same inputs too, as sync's guide asks of a retry (the form's boundary aside).
    expect(new Set(sync.posts.slice(posts).map((p) => p.fingerprint)).size).toBe(1);
    expect(sync.submits.slice(made)).toHaveLength(1);
    expect((await quiet.api('GET', `/api/v1/generations/${id}`, { key: q.key })).body.status).toBe('processing');
  });
});

describe('inbound sync webhooks', () => {
  it('a forged, stale or unsigned one is 401 and changes nothing; a valid one for an unknown job is ignored', async () => {
    const body = JSON.stringify({ id: 'gen-unknown', status: 'COMPLETED' });
    for (const signature of [sync.sign(body, { secret: 'whsec_wrong' }), sync.sign(body, { t: Math.floor(Date.now() / 1000) - 3600 }), 't=1,v1=zz']) {
      const r = await svc.api('POST', '/hooks/sync', { rawBody: body, headers: { 'content-type': 'application/json', 'sync-signature': signature } });
      expect(r.status).toBe(401);
      expect(r.body).toEqual({ error: { code: 'unauthorized', message: 'The webhook signature is not valid' } });
    }
    const unsigned = await svc.api('POST', '/hooks/sync', { rawBody: body, headers: { 'content-type': 'application/json' } });
    expect(unsigned.status).toBe(401);
    const ok = await svc.api('POST', '/hooks/sync', { rawBody: body, headers: { 'content-type': 'application/json', 'sync-signature': sync.sign(body) } });
    expect(ok.status).toBe(200);
    // A signed callback for a job not recorded (yet): kept, in case its submit's answer is on its way.
    expect(ok.body).toEqual({ received: true, outcome: 'early' });
    expect(await svc.app.db.selectFrom('upstream_early_hooks').select(['provider', 'job_ref']).where('job_ref', '=', 'gen-unknown').execute()).toEqual([{ provider: 'sync', job_ref: 'gen-unknown' }]);
  });

  it('never shows the sync key or the webhook secret', async () => {
    const rows = JSON.stringify(await svc.app.db.selectFrom('upstream_jobs').selectAll().execute());
    for (const text of [rows, svc.logLines.join('\n')]) {
      expect(text).not.toContain(SYNC_KEY);
      expect(text).not.toContain(SECRET);
    }
  });
});
