import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VOICES } from '../../src/domain/catalogue/voices.ts';
import { probeMedia, runFfmpeg } from '../../src/adapters/engines/ffmpeg.ts';
import { startTestService, type TestService } from '../support/app.ts';
import { graphqlClient } from '../support/graphql-client.ts';
import { pngBytes, sendBytes, startImageHost } from '../support/image-host.ts';

let svc: TestService;
let client: Awaited<ReturnType<typeof graphqlClient>>;
let host: Awaited<ReturnType<typeof startImageHost>>;
let a: Awaited<ReturnType<TestService['team']>>;
let b: Awaited<ReturnType<TestService['team']>>;
const emma = VOICES.find((v) => v.name === 'Emma')!;
const MISSING = '00000000-0000-4000-8000-000000000000';

/** Three seconds of a 220 Hz tone as 16-bit PCM WAV, made by ffmpeg. */
async function sineWav(): Promise<Buffer> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'adforge-gql-voices-'));
  try {
    const file = path.join(dir, 'tone.wav');
    await runFfmpeg(['-f', 'lavfi', '-i', 'sine=frequency=220:duration=3', '-ac', '1', '-ar', '22050', '-c:a', 'pcm_s16le', file]);
    return await fs.readFile(file);
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

beforeAll(async () => {
  svc = await startTestService();
  client = await graphqlClient(svc);
  host = await startImageHost({
    '/tone.wav': sendBytes(await sineWav(), 'audio/wav'),
    '/p.png': sendBytes(await pngBytes(), 'image/png'),
  });
  a = await svc.team({ credits: 100 });
  b = await svc.team({ credits: 100 });
});
afterAll(async () => {
  await host?.close();
  await client?.close();
  await svc?.close();
});

const creditsUsed = async (key: string): Promise<number> => (await client.gql('{ credits { credits_used } }', {}, key)).body.data.credits.credits_used;

const TTS = `mutation ($input: TextToSpeechInput!, $key: String) {
  createTextToSpeech(input: $input, idempotencyKey: $key) {
    __typename
    ... on MutationCreateTextToSpeechSuccess { data { id status duration audio_url } }
    ... on AppError { code message }
  }
}`;
const STS = `mutation ($input: SpeechToSpeechInput!, $key: String) {
  createSpeechToSpeech(input: $input, idempotencyKey: $key) {
    __typename
    ... on MutationCreateSpeechToSpeechSuccess { data { id status duration audio_url } }
    ... on AppError { code message }
  }
}`;
const VOICES_Q = `query ($gender: String, $age_group: String, $accent: String, $style: String, $limit: Int, $offset: Int) {
  voices(gender: $gender, age_group: $age_group, accent: $accent, style: $style, limit: $limit, offset: $offset) {
    totalCount limit offset items { id name gender age_group accent style preview_audio_url }
  }
}`;

async function playable(vo: { audio_url: string; duration: number }) {
  const audio = await svc.fetchUrl(vo.audio_url);
  expect(audio.status).toBe(200);
  const info = await probeMedia(audio.bytes);
  expect(info.audioCodec).toBe('mp3');
  expect(Math.abs(info.durationSeconds! - vo.duration)).toBeLessThan(0.1);
}

describe('voices query', () => {
  it('filters and pages like REST GET /voices', async () => {
    const cases: Record<string, string | number>[] = [
      {},
      { gender: 'female', limit: 3, offset: 2 },
      { accent: 'british', style: 'professional' },
      { age_group: 'senior', limit: 2 },
      { gender: 'other', age_group: 'adult', accent: 'neutral', style: 'professional' },
      { limit: 100, offset: 25 },
    ];
    for (const vars of cases) {
      const gql = await client.gql(VOICES_Q, vars, a.key);
      expect(gql.body.errors, JSON.stringify(vars)).toBeUndefined();
      const qs = new URLSearchParams(Object.entries(vars).map(([k, v]) => [k, String(v)])).toString();
      const rest = await svc.api('GET', `/api/v1/voices${qs ? `?${qs}` : ''}`, { key: a.key });
      expect(rest.status).toBe(200);
      const page = gql.body.data.voices;
      expect(page.items, JSON.stringify(vars)).toEqual(rest.body.data);
      expect({ totalCount: page.totalCount, limit: page.limit, offset: page.offset }).toEqual({
        totalCount: rest.body.pagination.total,
        limit: rest.body.pagination.limit,
        offset: rest.body.pagination.offset,
      });
    }
    const british = await client.gql(VOICES_Q, { accent: 'british', style: 'professional' }, a.key);
    expect(british.body.data.voices.items.map((v: { name: string }) => v.name).sort()).toEqual(['Arthur', 'Charlotte']);
    const all = await client.gql(VOICES_Q, { limit: 100 }, a.key);
    expect(all.body.data.voices.totalCount).toBe(VOICES.length);
  });

  it('answers a bad filter or page with a validation error carrying the REST message, never a 5xx', async () => {
    for (const [vars, field] of [
      [{ gender: 'robot' }, 'gender'],
      [{ age_group: 'teen' }, 'age_group'],
      [{ accent: 'martian' }, 'accent'],
      [{ style: 'shouting' }, 'style'],
      [{ limit: 0 }, 'limit'],
      [{ offset: -1 }, 'offset'],
    ] as const) {
      const res = await client.gql(VOICES_Q, vars, a.key);
      expect(res.status).toBeLessThan(500);
      expect(res.body.data ?? null).toBeNull();
      expect(res.body.errors[0].extensions.code, JSON.stringify(vars)).toBe('validation_error');
      expect(res.body.errors[0].message).toMatch(new RegExp(`^${field}: `));
      const qs = new URLSearchParams(Object.entries(vars).map(([k, v]) => [k, String(v)])).toString();
      const rest = await svc.api('GET', `/api/v1/voices?${qs}`, { key: a.key });
      expect(rest.status).toBe(400);
      expect(res.body.errors[0].message).toBe(rest.body.error.message);
    }
  });

  it('needs a key, like REST', async () => {
    const res = await client.gql(VOICES_Q, {});
    expect(res.body.errors[0].extensions.code).toBe('unauthorized');
  });
});

describe('createTextToSpeech', () => {
  it('returns a completed voiceover whose audio plays for `duration`; 1 credit', async () => {
    const t = await svc.team({ credits: 10 });
    const res = await client.gql(TTS, { input: { text: 'Light, tough, and ready for the mountain.', voice_id: emma.id } }, t.key);
    const out = res.body.data.createTextToSpeech;
    expect(out.__typename).toBe('MutationCreateTextToSpeechSuccess');
    expect(out.data).toMatchObject({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), status: 'completed' });
    expect(out.data.duration).toBeGreaterThan(1);
    await playable(out.data);
    expect(await creditsUsed(t.key)).toBe(1);
    const read = await client.gql('query ($id: ID!) { voiceover(id: $id) { id status duration audio_url } }', { id: out.data.id }, t.key);
    expect(read.body.data.voiceover).toMatchObject({ id: out.data.id, status: 'completed', duration: out.data.duration });
    await playable(read.body.data.voiceover);
  });

  it('takes model and voice_settings, and treats explicit nulls as absent', async () => {
    const t = await svc.team({ credits: 10 });
    const res = await client.gql(
      TTS,
      { input: { text: 'Settings kept.', voice_id: emma.id, model: 'eleven_multilingual_v2', voice_settings: { stability: 0.4, similarity_boost: 0.9 } } },
      t.key,
    );
    const id = res.body.data.createTextToSpeech.data.id;
    const row = await svc.app.db.selectFrom('voiceovers').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ kind: 'text-to-speech', model: 'eleven_multilingual_v2', voice_settings: { stability: 0.4, similarity_boost: 0.9 }, credits: 1 });
    const nulls = await client.gql(TTS, { input: { text: 'Nulls.', voice_id: emma.id, model: null, voice_settings: null } }, t.key);
    expect(nulls.body.data.createTextToSpeech.__typename).toBe('MutationCreateTextToSpeechSuccess');
  });

  it('replays an idempotencyKey: the same voiceover, charged once', async () => {
    const t = await svc.team({ credits: 10 });
    const vars = { input: { text: 'Said once, answered twice.', voice_id: emma.id }, key: 'gql-tts-1' };
    const r1 = await client.gql(TTS, vars, t.key);
    const r2 = await client.gql(TTS, vars, t.key);
    const [d1, d2] = [r1.body.data.createTextToSpeech.data, r2.body.data.createTextToSpeech.data];
    expect(d1.id).toBeDefined();
    expect(d2).toMatchObject({ id: d1.id, status: 'completed', duration: d1.duration });
    await playable(d2);
    expect(await creditsUsed(t.key)).toBe(1);
    const count = await svc.app.db.selectFrom('voiceovers').select((eb) => eb.fn.countAll<string>().as('n')).where('team_id', '=', t.teamId).executeTakeFirstOrThrow();
    expect(Number(count.n)).toBe(1);
    // The GraphQL key is its own scope: the same key over REST is a different request.
    const rest = await svc.api('POST', '/api/v1/voiceovers/text-to-speech', { key: t.key, body: vars.input, headers: { 'idempotency-key': 'gql-tts-1' } });
    expect(rest.status).toBe(201);
    expect(rest.body.id).not.toBe(d1.id);
  });

  it('answers insufficient_credits as a typed error and charges nothing', async () => {
    const poor = await svc.team({ credits: 0 });
    const res = await client.gql(TTS, { input: { text: 'No credits left.', voice_id: emma.id } }, poor.key);
    expect(res.body.data.createTextToSpeech).toMatchObject({ __typename: 'AppError', code: 'insufficient_credits', message: expect.stringMatching(/needs 1 credits/) });
    expect(await creditsUsed(poor.key)).toBe(0);
  });

  it('answers an unknown voice with not_found, and bad input with validation_error', async () => {
    const t = await svc.team({ credits: 10 });
    for (const voice_id of [MISSING, 'not-a-provider-voice']) {
      const res = await client.gql(TTS, { input: { text: 'Who speaks?', voice_id } }, t.key);
      expect(res.body.data.createTextToSpeech).toMatchObject({ __typename: 'AppError', code: 'not_found', message: expect.stringMatching(/voice_id/) });
    }
    const empty = await client.gql(TTS, { input: { text: '   ', voice_id: emma.id } }, t.key);
    expect(empty.body.data.createTextToSpeech).toMatchObject({ code: 'validation_error', message: expect.stringMatching(/^text: must not be empty/) });
    const settings = await client.gql(TTS, { input: { text: 'x', voice_id: emma.id, voice_settings: { stability: 2 } } }, t.key);
    expect(settings.body.data.createTextToSpeech).toMatchObject({ code: 'validation_error', message: expect.stringMatching(/^voice_settings\.stability: /) });
    expect(await creditsUsed(t.key)).toBe(0);
  });
});

describe('createSpeechToSpeech', () => {
  it('converts an audio file from a URL into a voiceover; 1 credit for 3 s', async () => {
    const t = await svc.team({ credits: 10 });
    const res = await client.gql(STS, { input: { audio_url: host.url('/tone.wav'), voice_id: emma.id } }, t.key);
    const out = res.body.data.createSpeechToSpeech;
    expect(out.__typename, JSON.stringify(out)).toBe('MutationCreateSpeechToSpeechSuccess');
    expect(out.data.status).toBe('completed');
    await playable(out.data);
    expect(await creditsUsed(t.key)).toBe(1);
    const row = await svc.app.db.selectFrom('voiceovers').selectAll().where('id', '=', out.data.id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ kind: 'speech-to-speech', source_url: host.url('/tone.wav'), credits: 1 });
  });

  it('refuses a source that is not audio as a typed validation error', async () => {
    const t = await svc.team({ credits: 10 });
    const res = await client.gql(STS, { input: { audio_url: host.url('/p.png'), voice_id: emma.id } }, t.key);
    expect(res.body.data.createSpeechToSpeech).toMatchObject({ __typename: 'AppError', code: 'validation_error', message: expect.stringMatching(/^audio_url: /) });
    expect(await creditsUsed(t.key)).toBe(0);
  });
});

describe('voiceover query', () => {
  it("is null for another team's voiceover and for a missing one", async () => {
    const made = await client.gql(TTS, { input: { text: 'Team A only.', voice_id: emma.id } }, a.key);
    const id = made.body.data.createTextToSpeech.data.id;
    const q = 'query ($id: ID!) { voiceover(id: $id) { id } }';
    expect((await client.gql(q, { id }, a.key)).body.data.voiceover).toEqual({ id });
    const theirs = await client.gql(q, { id }, b.key);
    expect(theirs.body).toEqual({ data: { voiceover: null } });
    expect((await client.gql(q, { id: MISSING }, a.key)).body).toEqual({ data: { voiceover: null } });
    const bad = await client.gql(q, { id: 'nope' }, a.key);
    expect(bad.body.errors[0].extensions.code).toBe('validation_error');
  });
});

describe('TalkingAvatarDetails.voiceover', () => {
  it('resolves the voiceover a talking avatar was made with; null without one', async () => {
    const t = await svc.team({ credits: 200 });
    const vo = (await client.gql(TTS, { input: { text: 'Spoken by the avatar.', voice_id: emma.id } }, t.key)).body.data.createTextToSpeech.data;
    const avatarId = (await client.gql('{ avatars { id } }', {}, t.key)).body.data.avatars[0].id;
    const create = `mutation ($input: TalkingAvatarInput!) {
      createTalkingAvatarVideo(input: $input) {
        __typename
        ... on MutationCreateTalkingAvatarVideoSuccess { data { generation_id } }
        ... on AppError { code message }
      }
    }`;
    const withVo = await client.gql(create, { input: { avatar_id: avatarId, avatar_type: 'platform', voiceover_id: vo.id } }, t.key);
    expect(withVo.body.data.createTalkingAvatarVideo.__typename, JSON.stringify(withVo.body)).toBe('MutationCreateTalkingAvatarVideoSuccess');
    const withoutVo = await client.gql(create, { input: { avatar_id: avatarId, avatar_type: 'platform', script: 'Plain script.', voice_id: emma.id } }, t.key);
    expect(withoutVo.body.data.createTalkingAvatarVideo.__typename, JSON.stringify(withoutVo.body)).toBe('MutationCreateTalkingAvatarVideoSuccess');
    const read = `query ($id: ID!) { generation(id: $id) { details { ... on TalkingAvatarDetails { voiceover_id voiceover { id status duration audio_url } } } } }`;
    const g1 = await client.gql(read, { id: withVo.body.data.createTalkingAvatarVideo.data.generation_id }, t.key);
    expect(g1.body.errors).toBeUndefined();
    expect(g1.body.data.generation.details).toMatchObject({ voiceover_id: vo.id, voiceover: { id: vo.id, status: 'completed', duration: vo.duration } });
    await playable(g1.body.data.generation.details.voiceover);
    const g2 = await client.gql(read, { id: withoutVo.body.data.createTalkingAvatarVideo.data.generation_id }, t.key);
    expect(g2.body.data.generation.details).toEqual({ voiceover_id: null, voiceover: null });
  });
});
