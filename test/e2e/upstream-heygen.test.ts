import { fileTypeFromBuffer } from 'file-type';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VOICES } from '../../src/domain/catalogue/voices.ts';
import { graphqlClient, progressEvents } from '../support/graphql-client.ts';
import { HEYGEN_DOCUMENTED_LANGUAGES, startHeyGenFake } from '../support/heygen-fake.ts';
import { pngBytes, sendBytes, startImageHost } from '../support/image-host.ts';
import { testVideo } from '../support/media-probe.ts';
import { startTestService, waitForGeneration, type TestService } from '../support/app.ts';

const HEYGEN_KEY = 'hg-test-key-0b7e55d1c3';
const VOICE_ID = VOICES[0]!.id;
let heygen: Awaited<ReturnType<typeof startHeyGenFake>>;
let host: Awaited<ReturnType<typeof startImageHost>>;
let video: Buffer;
let svc: TestService;
let t: Awaited<ReturnType<TestService['team']>>;
let platformAvatar: { id: string; image_key: string };

beforeAll(async () => {
  video = await testVideo({ width: 160, height: 90, seconds: 1 });
  // Klingon stands for a language HeyGen lists that adforge's defaults do not name (HEYGEN_LANGUAGES adds it).
  heygen = await startHeyGenFake({ key: HEYGEN_KEY, video, languages: [...HEYGEN_DOCUMENTED_LANGUAGES, 'Klingon (Qo’noS)'] });
  host = await startImageHost({ '/face.png': sendBytes(await pngBytes(48, 48, '#c08050'), 'image/png'), '/clip.mp4': sendBytes(video, 'video/mp4') });
  svc = await startTestService(
    {
      HEYGEN_API_KEY: HEYGEN_KEY,
      HEYGEN_API_URL: heygen.url,
      HEYGEN_LANGUAGES: 'tlh=Klingon (Qo’noS);pt-BR=Portuguese (Brazil)',
      ENGINE_ROUTES: 'heygen-avatar4=heygen,lipsync-2.0=heygen,localize=heygen,swap-avatar=heygen,*=local',
      UPSTREAM_POLL_MS: '40',
    },
    { worker: true },
  );
  t = await svc.team({ credits: 100_000 });
  platformAvatar = await svc.app.db.selectFrom('avatars').select(['id', 'image_key']).where('avatar_type', '=', 'platform').orderBy('name').executeTakeFirstOrThrow();
});
afterAll(async () => {
  await svc?.close();
  await heygen?.close();
  await host?.close();
});

const post = (path: string, body: Record<string, unknown>) => svc.api('POST', `/api/v1${path}`, { key: t.key, body });
const used = async () => (await svc.app.db.selectFrom('teams').select('credits_used').where('id', '=', t.teamId).executeTakeFirstOrThrow()).credits_used;
const stored = async (key: string) => (await svc.app.storage.get(key))!.bytes;
const completed = async (id: string) => {
  const g = await waitForGeneration(svc, t.key, id);
  expect(g.status, g.error).toBe('completed');
  expect((await svc.fetchUrl(g.result_url)).bytes.equals(video)).toBe(true);
  return g;
};
const attemptOf = async (generationId: string) => svc.app.db.selectFrom('upstream_jobs').selectAll().where('generation_id', '=', generationId).orderBy('created_at').execute();

describe('talking avatars on HeyGen (heygen-avatar4)', () => {
  it("the script is spoken by our speech engine; HeyGen gets the avatar's image and that audio as assets, portrait 720p, under our attempt id", async () => {
    const res = await post('/videos/talking-avatar', { avatar_id: platformAvatar.id, avatar_type: 'platform', script: 'Fresh coffee, every morning.', voice_id: VOICE_ID });
    expect(res.status).toBe(202);
    await completed(res.body.generation_id);
    const create = heygen.videoCreates.find((c) => c.body.title === `adforge ${res.body.generation_id}`)!;
    expect(create.body).toMatchObject({ type: 'image', image: { type: 'asset_id' }, aspect_ratio: '9:16', resolution: '720p' });
    const [attempt] = await attemptOf(res.body.generation_id);
    expect(create.key).toBe(attempt!.id);
    const face = heygen.assets.get(create.body.image.asset_id)!;
    expect(face.bytes.equals(await stored(platformAvatar.image_key))).toBe(true);
    // The audio is ours: what our speech engine said, kept with the generation, is what HeyGen animates.
    const audio = heygen.assets.get(create.body.audio_asset_id)!;
    const ours = await stored(`upstream-inputs/${res.body.generation_id}/speech.mp3`);
    expect(audio.bytes.equals(ours)).toBe(true);
    expect((await fileTypeFromBuffer(audio.bytes))?.mime).toBe('audio/mpeg');
    expect(create.body).not.toHaveProperty('script');
    // Storage usage: the kept speech counts as the generation's input, its video as its output.
    const row = await svc.app.db.selectFrom('generations').select(['input_bytes', 'output_bytes', 'result_keys']).where('id', '=', res.body.generation_id).executeTakeFirstOrThrow();
    expect(row.input_bytes).toBe(ours.length);
    let results = 0;
    for (const k of row.result_keys) results += (await stored(k)).length;
    expect(row.output_bytes).toBe(results);
    expect(results).toBeGreaterThan(0);
  });

  it("HeyGen's states are the generation's live stage: its first answer, pending, shows as queued", async () => {
    const res = await post('/videos/talking-avatar', { avatar_id: platformAvatar.id, avatar_type: 'platform', script: 'Progress, in words.', voice_id: VOICE_ID });
    const seen = await progressEvents(await graphqlClient(svc), t.key, res.body.generation_id);
    const stages = seen.map((g) => g.stage);
    expect(stages.indexOf('sent to heygen')).toBeGreaterThanOrEqual(0);
    expect(stages.indexOf('queued'), JSON.stringify(stages)).toBeGreaterThan(stages.indexOf('sent to heygen'));
    expect(seen.find((g) => g.stage === 'queued')!.progress).toBe(0);
    expect(seen.at(-1)).toMatchObject({ status: 'completed', progress: 1, stage: null });
  });

  it("a voiceover_id is used as it is: the lip-sync provider receives the voiceover's own bytes (not spoken again)", async () => {
    const vo = await post('/voiceovers/text-to-speech', { text: 'A voice made once.', voice_id: VOICE_ID });
    expect(vo.status).toBe(201);
    const row = await svc.app.db.selectFrom('voiceovers').select('audio_key').where('id', '=', vo.body.id).executeTakeFirstOrThrow();
    const client = await graphqlClient(svc);
    const res = await client.gql(
      `mutation ($input: TalkingAvatarInput!) { createTalkingAvatarVideo(input: $input) { ... on MutationCreateTalkingAvatarVideoSuccess { data { generation_id } } ... on AppError { code message } } }`,
      { input: { avatar_id: platformAvatar.id, avatar_type: 'platform', voiceover_id: vo.body.id } },
      t.key,
    );
    await client.close();
    const id = res.body.data?.createTalkingAvatarVideo?.data?.generation_id;
    expect(id, JSON.stringify(res.body)).toBeTruthy();
    await completed(id);
    const create = heygen.videoCreates.find((c) => c.body.title === `adforge ${id}`)!;
    expect(heygen.assets.get(create.body.audio_asset_id)!.bytes.equals(await stored(row.audio_key))).toBe(true);
    expect(await svc.app.storage.get(`upstream-inputs/${id}/speech.mp3`)).toBeNull();
    // Storage usage: the voiceover's audio counts once, as the voiceover's; the generation kept no copy.
    expect((await svc.app.db.selectFrom('voiceovers').select('audio_bytes').where('id', '=', vo.body.id).executeTakeFirstOrThrow()).audio_bytes).toBe((await stored(row.audio_key)).length);
    expect((await svc.app.db.selectFrom('generations').select('input_bytes').where('id', '=', id).executeTakeFirstOrThrow()).input_bytes).toBe(0);
  });

  it("avatar_type product animates the product's image", async () => {
    const p = await post('/products', { name: 'Mug', description: 'd', category: 'home', image_url: host.url('/face.png') });
    const product = await svc.app.db.selectFrom('products').select('image_key').where('id', '=', p.body.id).executeTakeFirstOrThrow();
    const res = await post('/videos/talking-avatar', { avatar_id: p.body.id, avatar_type: 'product', script: 'I am a mug.', voice_id: VOICE_ID });
    await completed(res.body.generation_id);
    const create = heygen.videoCreates.find((c) => c.body.title === `adforge ${res.body.generation_id}`)!;
    expect(heygen.assets.get(create.body.image.asset_id)!.bytes.equals(await stored(product.image_key))).toBe(true);
  });

  it('lipsync-2.0 routed to HeyGen is a 400 at create; a HeyGen failure fails the generation with its message and refunds', async () => {
    const before = await used();
    const wrong = await post('/videos/talking-avatar', { avatar_id: platformAvatar.id, avatar_type: 'platform', script: 'x', voice_id: VOICE_ID, lipsync_model: 'lipsync-2.0' });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error).toEqual({ code: 'validation_error', message: "lipsync_model: lipsync-2.0 is not HeyGen's; HeyGen animates heygen-avatar4" });
    heygen.refuseNextVideo('No face detected in the image');
    const res = await post('/videos/talking-avatar', { avatar_id: platformAvatar.id, avatar_type: 'platform', script: 'No face here.', voice_id: VOICE_ID });
    const g = await waitForGeneration(svc, t.key, res.body.generation_id);
    expect(g.status).toBe('failed');
    expect(g.error).toBe('HeyGen could not make the video: No face detected in the image');
    expect(await used()).toBe(before);
  });

  it('a submit whose answer was lost is sent again with the same Idempotency-Key, and HeyGen makes one video', async () => {
    heygen.dropNextVideoAnswer();
    const res = await post('/videos/talking-avatar', { avatar_id: platformAvatar.id, avatar_type: 'platform', script: 'Sent twice, made once.', voice_id: VOICE_ID });
    await completed(res.body.generation_id);
    const attempts = await attemptOf(res.body.generation_id);
    expect(attempts).toHaveLength(1);
    const sends = heygen.videoCreates.filter((c) => c.body.title === `adforge ${res.body.generation_id}`);
    // The first send created the job; the second carried the same key and was answered from it.
    expect(sends).toHaveLength(1);
    expect(sends[0]!.key).toBe(attempts[0]!.id);
    expect(heygen.replayed.get(`/v3/videos ${attempts[0]!.id}`)).toBe(1);
    expect([...heygen.jobs.keys()].filter((id) => id === attempts[0]!.provider_job_id)).toHaveLength(1);
  });
});

describe('localize on HeyGen video translation', () => {
  it('maps every field: mode, output_language to its HeyGen name, speaker_num, translate_audio_only, enable_dynamic_duration', async () => {
    const res = await post('/videos/localize', {
      video_url: host.url('/clip.mp4'),
      mode: 'precision',
      output_language: 'pt-BR',
      duration: 30,
      width: 1080,
      height: 1920,
      speaker_num: 2,
      translate_audio_only: true,
      enable_dynamic_duration: false,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    await completed(res.body.generation_id);
    const create = heygen.translationCreates.find((c) => c.body.title === `adforge ${res.body.generation_id}`)!;
    const attempt = (await attemptOf(res.body.generation_id))[0]!.id;
    // HeyGen calls back on a URL holding this attempt's own token (its callbacks are not signed).
    const callbackUrl = new RegExp(`^${svc.baseUrl.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}/hooks/heygen/${attempt}\\.[A-Za-z0-9_-]{43}$`);
    expect(create.body).toEqual({
      callback_url: expect.stringMatching(callbackUrl),
      callback_id: attempt,
      video: { type: 'url', url: host.url('/clip.mp4') },
      output_languages: ['Portuguese (Brazil)'],
      mode: 'precision',
      speaker_num: 2,
      translate_audio_only: true,
      enable_dynamic_duration: false,
      title: `adforge ${res.body.generation_id}`,
    });
    expect(create.key).toBe((await attemptOf(res.body.generation_id))[0]!.id);
  });

  it('a bare language takes its default variant; HEYGEN_LANGUAGES adds languages; an unknown one is a 400', async () => {
    const es = await post('/videos/localize', { video_url: host.url('/clip.mp4'), mode: 'speed', output_language: 'es', duration: 5, width: 640, height: 360 });
    await completed(es.body.generation_id);
    expect(heygen.translationCreates.find((c) => c.body.title === `adforge ${es.body.generation_id}`)!.body.output_languages).toEqual(['Spanish (Spain)']);
    const tlh = await post('/videos/localize', { video_url: host.url('/clip.mp4'), mode: 'speed', output_language: 'tlh', duration: 5, width: 640, height: 360 });
    await completed(tlh.body.generation_id);
    const before = await used();
    const xx = await post('/videos/localize', { video_url: host.url('/clip.mp4'), mode: 'speed', output_language: 'xq', duration: 5, width: 640, height: 360 });
    expect(xx.status).toBe(400);
    expect(xx.body.error.message).toMatch(/^output_language: HeyGen has no language for xq here/);
    expect(await used()).toBe(before);
  });
});

describe('swap-avatar on HeyGen face swap', () => {
  it('image_url and the target video go to the FaceswapNode workflow as links', async () => {
    const res = await post('/videos/swap-avatar', { video_url: host.url('/clip.mp4'), mode: 'standard', duration: 5, width: 640, height: 360, image_url: host.url('/face.png') });
    await completed(res.body.generation_id);
    expect(heygen.workflowCreates.at(-1)!.body).toEqual({ workflow_type: 'FaceswapNode', input: { source_image_url: host.url('/face.png'), target_video_url: host.url('/clip.mp4') } });
  });

  it("an avatar's face goes as a signed link to our stored copy", async () => {
    const res = await post('/videos/swap-avatar', { video_url: host.url('/clip.mp4'), mode: 'pro', duration: 3, width: 640, height: 360, avatar_id: platformAvatar.id, avatar_type: 'platform' });
    await completed(res.body.generation_id);
    const source = heygen.workflowCreates.at(-1)!.body.input.source_image_url as string;
    expect(source.startsWith(`${svc.baseUrl}/files/`)).toBe(true);
    expect((await svc.fetchUrl(source)).bytes.equals(await stored(platformAvatar.image_key))).toBe(true);
  });
});

describe('through GraphQL', () => {
  it('localize and swap-avatar reach HeyGen the same way', async () => {
    const client = await graphqlClient(svc);
    const loc = await client.gql(
      `mutation ($input: LocalizeInput!) { createLocalizedVideo(input: $input) { ... on MutationCreateLocalizedVideoSuccess { data { generation_id } } ... on AppError { code message } } }`,
      { input: { video_url: host.url('/clip.mp4'), mode: 'speed', output_language: 'fr', duration: 5, width: 640, height: 360, speaker_num: 1 } },
      t.key,
    );
    const swap = await client.gql(
      `mutation ($input: SwapAvatarInput!) { createSwapAvatarVideo(input: $input) { ... on MutationCreateSwapAvatarVideoSuccess { data { generation_id } } ... on AppError { code message } } }`,
      { input: { video_url: host.url('/clip.mp4'), mode: 'standard', duration: 2, width: 640, height: 360, image_url: host.url('/face.png') } },
      t.key,
    );
    await client.close();
    const locId = loc.body.data?.createLocalizedVideo?.data?.generation_id;
    const swapId = swap.body.data?.createSwapAvatarVideo?.data?.generation_id;
    expect(locId, JSON.stringify(loc.body)).toBeTruthy();
    expect(swapId, JSON.stringify(swap.body)).toBeTruthy();
    await completed(locId);
    await completed(swapId);
    expect(heygen.translationCreates.find((c) => c.body.title === `adforge ${locId}`)!.body).toMatchObject({ output_languages: ['French (France)'], mode: 'speed', speaker_num: 1 });
  });
});

describe('keys', () => {
  it('never shows the HeyGen key in logs, rows or errors', async () => {
    const rows = JSON.stringify([await svc.app.db.selectFrom('upstream_jobs').selectAll().execute(), await svc.app.db.selectFrom('generations').select(['error', 'params']).execute()]);
    for (const text of [rows, svc.logLines.join('\n')]) expect(text).not.toContain(HEYGEN_KEY);
  });
});
