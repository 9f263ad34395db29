import fs from 'node:fs/promises';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { VOICES } from '../../src/domain/catalogue/voices.ts';
import { probeMedia } from '../../src/adapters/engines/ffmpeg.ts';
import { startTestService, type TestService } from '../support/app.ts';
import { STS_SECONDS, TTS_SECONDS, startElevenLabsFake, type ElevenLabsFake, type FakeFailure } from '../support/elevenlabs-fake.ts';
import { sendBytes, startImageHost } from '../support/image-host.ts';
import { wavSeconds } from '../support/wav.ts';

/** Voiceovers routed to the ElevenLabs engine (SPEECH_ENGINE=elevenlabs), against a local fake of the API. */

const emma = VOICES.find((v) => v.name === 'Emma')!;
const james = VOICES.find((v) => v.name === 'James')!;
const olivia = VOICES.find((v) => v.name === 'Olivia')!; // not mapped
const KEY = 'xi-e2e-key-8d2f61c0a9b3e457';
const EMMA_PROVIDER = 'EXAVITQu4vr4xnSDxMaL';
const JAMES_PROVIDER = 'pNInz6obpgDQGcFmaJgB';
const SOURCE = wavSeconds(4);

let svc: TestService;
let fake: ElevenLabsFake;
let host: Awaited<ReturnType<typeof startImageHost>>;

beforeAll(async () => {
  fake = await startElevenLabsFake({ apiKey: KEY, voices: [EMMA_PROVIDER, JAMES_PROVIDER] });
  host = await startImageHost({ '/voice.wav': sendBytes(SOURCE, 'audio/wav') });
  svc = await startTestService({
    SPEECH_ENGINE: 'elevenlabs',
    ELEVENLABS_API_URL: fake.baseUrl,
    ELEVENLABS_API_KEY: KEY,
    ELEVENLABS_VOICE_IDS: `${emma.id}=${EMMA_PROVIDER}, ${james.id}=${JAMES_PROVIDER}`,
  });
}, 120_000);
afterAll(async () => {
  await svc?.close();
  await host?.close();
  await fake?.close();
});
beforeEach(() => fake.reset());

const tts = (key: string, body: unknown, headers: Record<string, string> = {}) => svc.api('POST', '/api/v1/voiceovers/text-to-speech', { key, body, headers });
const sts = (key: string, body: unknown, headers: Record<string, string> = {}) => svc.api('POST', '/api/v1/voiceovers/speech-to-speech', { key, body, headers });

/** Everything a voiceover can leave behind for a team. */
async function footprint(teamId: string) {
  const t = await svc.app.db.selectFrom('teams').select('credits_used').where('id', '=', teamId).executeTakeFirstOrThrow();
  const count = async (table: 'voiceovers' | 'idempotency_keys' | 'credit_ledger') =>
    (await sql<{ n: number }>`select count(*)::int as n from ${sql.table(table)} where team_id = ${teamId}`.execute(svc.app.db)).rows[0]!.n;
  // Stored MP3s (local storage keeps a .meta.json sidecar next to each).
  const files = await fs.readdir(path.join(svc.dataDir, 'files', 'voiceovers', teamId)).catch(() => [] as string[]);
  return { used: t.credits_used, voiceovers: await count('voiceovers'), ledger: await count('credit_ledger'), idempotencyKeys: await count('idempotency_keys'), files: files.filter((f) => f.endsWith('.mp3')).length };
}
const NOTHING = { used: 0, voiceovers: 0, ledger: 0, idempotencyKeys: 0, files: 0 };

describe('text to speech through the provider', () => {
  it('answers 201 with the provider audio, its measured duration, and charges 1 credit', async () => {
    const t = await svc.team({ credits: 10 });
    const res = await tts(t.key, { text: 'Made upstream.', voice_id: emma.id });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(['audio_url', 'duration', 'id', 'status']);
    expect(res.body.status).toBe('completed');
    const audio = await svc.fetchUrl(res.body.audio_url);
    expect(audio.status).toBe(200);
    expect(audio.headers['content-type']).toBe('audio/mpeg');
    expect(audio.bytes.equals(fake.audio.tts)).toBe(true);
    const measured = (await probeMedia(audio.bytes)).durationSeconds!;
    expect(res.body.duration).toBe(Math.round(measured * 1000) / 1000);
    expect(Math.abs(res.body.duration - TTS_SECONDS)).toBeLessThan(0.1);
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0]!.path).toBe(`/v1/text-to-speech/${EMMA_PROVIDER}`);
    expect(fake.requests[0]!.json).toEqual({ text: 'Made upstream.', model_id: 'eleven_multilingual_v2' });
    expect(await footprint(t.teamId)).toEqual({ used: 1, voiceovers: 1, ledger: 1, idempotencyKeys: 0, files: 1 });
  });

  it('forwards model and voice_settings, and keeps them with the voiceover', async () => {
    const t = await svc.team({ credits: 10 });
    const body = { text: 'Tuned.', voice_id: james.id, model: 'eleven_turbo_v2_5', voice_settings: { stability: 0.35, similarity_boost: 0.85 } };
    const res = await tts(t.key, body);
    expect(res.status).toBe(201);
    expect(fake.requests[0]!.path).toBe(`/v1/text-to-speech/${JAMES_PROVIDER}`);
    expect(fake.requests[0]!.json).toEqual({ text: 'Tuned.', model_id: 'eleven_turbo_v2_5', voice_settings: { stability: 0.35, similarity_boost: 0.85 } });
    const row = await svc.app.db.selectFrom('voiceovers').selectAll().where('id', '=', res.body.id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ model: 'eleven_turbo_v2_5', voice_settings: { stability: 0.35, similarity_boost: 0.85 }, credits: 1 });
  });

  it('serves voice previews from the same engine', async () => {
    const res = await svc.fetchUrl(`${svc.baseUrl}/voice-previews/${emma.id}.mp3`);
    expect(res.status).toBe(200);
    expect(res.bytes.equals(fake.audio.tts)).toBe(true);
    expect(fake.requests.map((r) => r.path)).toEqual([`/v1/text-to-speech/${EMMA_PROVIDER}`]);
  });
});

describe('speech to speech through the provider', () => {
  it('uploads the recording and answers 201 with the provider audio and its duration; priced by the source', async () => {
    const t = await svc.team({ credits: 10 });
    const res = await sts(t.key, { audio_url: host.url('/voice.wav'), voice_id: james.id, voice_settings: { stability: 0.6, similarity_boost: 0.4 } });
    expect(res.status).toBe(201);
    const audio = await svc.fetchUrl(res.body.audio_url);
    expect(audio.bytes.equals(fake.audio.sts)).toBe(true);
    expect(Math.abs(res.body.duration - STS_SECONDS)).toBeLessThan(0.1);
    const req = fake.requests[0]!;
    expect(req.path).toBe(`/v1/speech-to-speech/${JAMES_PROVIDER}`);
    expect(req.query).toEqual({ output_format: 'mp3_44100_128' });
    expect(req.parts!.map((p) => p.name)).toEqual(['audio', 'model_id', 'voice_settings']);
    expect((req.parts![0]!.value as Buffer).equals(SOURCE)).toBe(true);
    expect(req.parts![1]!.value).toBe('eleven_multilingual_sts_v2');
    expect(JSON.parse(req.parts![2]!.value as string)).toEqual({ stability: 0.6, similarity_boost: 0.4 });
    // 4 s of source: 1 credit.
    expect(await footprint(t.teamId)).toEqual({ used: 1, voiceovers: 1, ledger: 1, idempotencyKeys: 0, files: 1 });
  });
});

describe('a failing provider', () => {
  const failures: [FakeFailure, RegExp][] = [
    [500, /the voice provider failed \(HTTP 500\)/],
    [429, /the voice provider is rate-limiting requests \(HTTP 429: too_many_concurrent_requests\)/],
    [401, /the voice provider refused the request \(HTTP 401: invalid_api_key: Invalid API key: \[redacted\]\)/],
  ];
  for (const [failure, message] of failures) {
    it(`${failure}: text to speech answers 502 external_service_error, changes nothing, and the key stays usable`, async () => {
      const t = await svc.team({ credits: 10 });
      const before = await svc.api('GET', '/api/v1/account/credits', { key: t.key });
      const logsBefore = svc.logLines.length;
      // 401 the way it happens: the provider no longer accepts our key (and its message echoes it).
      if (failure === 401) fake.control.apiKey = 'a-rotated-key';
      else fake.control.fail = { with: failure, times: 'always' };
      const body = { text: 'Not this time.', voice_id: emma.id };
      const res = await tts(t.key, body, { 'idempotency-key': `upstream-${failure}` });
      expect(res.status).toBe(502);
      expect(res.body.error.code).toBe('external_service_error');
      expect(res.body.error.message).toMatch(message);
      expect(res.body.error.message).toMatch(/nothing was charged$/);
      expect(res.text).not.toContain(KEY);
      expect(svc.logLines.slice(logsBefore).join('')).not.toContain(KEY);
      expect(fake.requests).toHaveLength(1);
      expect((await svc.api('GET', '/api/v1/account/credits', { key: t.key })).body).toEqual(before.body);
      expect(await footprint(t.teamId)).toEqual(NOTHING);

      fake.reset();
      const again = await tts(t.key, body, { 'idempotency-key': `upstream-${failure}` });
      expect(again.status).toBe(201);
      expect(again.headers['idempotent-replayed']).toBeUndefined();
      expect(await footprint(t.teamId)).toEqual({ used: 1, voiceovers: 1, ledger: 1, idempotencyKeys: 1, files: 1 });
    });
  }

  it('speech to speech: 502, nothing charged, nothing stored', async () => {
    const t = await svc.team({ credits: 10 });
    fake.control.fail = { with: 500, times: 'always' };
    const res = await sts(t.key, { audio_url: host.url('/voice.wav'), voice_id: emma.id }, { 'idempotency-key': 'sts-upstream-500' });
    expect(res.status).toBe(502);
    expect(res.body.error.code).toBe('external_service_error');
    expect(await footprint(t.teamId)).toEqual(NOTHING);
  });

  it('audio cut off once ElevenLabs made it: 502 saying it was not asked again, nothing charged, one bill at ElevenLabs', async () => {
    const t = await svc.team({ credits: 10 });
    fake.control.fail = { with: 'cut', times: 1 };
    const res = await tts(t.key, { text: 'Cut short.', voice_id: emma.id });
    expect(res.status).toBe(502);
    expect(res.body.error.message).toBe('The voice engine failed: the voice provider lost its answer; it was not asked again, since it bills the speech it makes; nothing was charged');
    expect(fake.billed).toHaveLength(1);
    expect(fake.requests).toHaveLength(1);
    expect(await footprint(t.teamId)).toEqual(NOTHING);
  });

  it('audio that is not audio: 502, nothing charged', async () => {
    const t = await svc.team({ credits: 10 });
    fake.control.fail = { with: 'not-audio', times: 'always' };
    const res = await tts(t.key, { text: 'Garbled.', voice_id: emma.id });
    expect(res.status).toBe(502);
    expect(res.body.error.message).toMatch(/not MP3 audio/);
    expect(await footprint(t.teamId)).toEqual(NOTHING);
  });

  it('a voice the provider has no id for: 502 naming the voice, the provider not called, nothing charged', async () => {
    const t = await svc.team({ credits: 10 });
    for (const res of [
      await tts(t.key, { text: 'Unmapped.', voice_id: olivia.id }),
      await sts(t.key, { audio_url: host.url('/voice.wav'), voice_id: olivia.id }),
    ]) {
      expect(res.status).toBe(502);
      expect(res.body.error).toEqual({
        code: 'external_service_error',
        message: `The voice engine failed: the voice Olivia (${olivia.id}) is not available from the voice provider; nothing was charged`,
      });
    }
    expect(fake.requests).toHaveLength(0);
    expect(await footprint(t.teamId)).toEqual(NOTHING);
  });
});

// Issue 26, Low: the speech work ran before the debit, against a balance read once, so every
// concurrent call of a team with one credit called the provider and one was charged.
describe('credits are reserved before the speech work', () => {
  it('20 concurrent text-to-speech calls on a 1-credit team: one provider call, one charge, the rest 402 before any speech work', async () => {
    const t = await svc.team({ credits: 1 });
    // Each provider call is still in flight when the other requests arrive.
    fake.control.delayMs = 300;
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => tts(t.key, { text: `Race number ${i}.`, voice_id: emma.id })));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([201, ...Array(19).fill(402)]);
    for (const r of results.filter((x) => x.status === 402)) expect(r.body.error.code).toBe('insufficient_credits');
    expect(fake.requests.filter((r) => r.path.startsWith('/v1/text-to-speech/'))).toHaveLength(1);
    expect(await footprint(t.teamId)).toEqual({ used: 1, voiceovers: 1, ledger: 1, idempotencyKeys: 0, files: 1 });
  });

  it('speech to speech too: 10 concurrent calls priced 1 credit each on a 1-credit team make one provider call', async () => {
    const t = await svc.team({ credits: 1 });
    fake.control.delayMs = 300;
    const results = await Promise.all(Array.from({ length: 10 }, () => sts(t.key, { audio_url: host.url('/voice.wav'), voice_id: emma.id })));
    expect(results.map((r) => r.status).sort()).toEqual([201, ...Array(9).fill(402)]);
    expect(fake.requests.filter((r) => r.path.startsWith('/v1/speech-to-speech/'))).toHaveLength(1);
    expect((await footprint(t.teamId)).used).toBe(1);
  });

  it('a hold is not a charge: a failed call gives it back at once, and the hold of a process that died expires', async () => {
    const t = await svc.team({ credits: 1 });
    fake.control.fail = { with: 500, times: 'always' };
    expect((await tts(t.key, { text: 'This one fails.', voice_id: emma.id })).status).toBe(502);
    fake.reset();
    expect((await tts(t.key, { text: 'Then this one is made.', voice_id: emma.id })).status).toBe(201);
    // A process that held the team's last credit and died: its hold stops counting once it expires.
    const other = await svc.team({ credits: 1 });
    await svc.app.db.insertInto('credit_holds').values({ id: 'once:dead', team_id: other.teamId, credits: 1, expires_at: new Date(Date.now() + 60_000) }).execute();
    expect((await tts(other.key, { text: 'Held elsewhere.', voice_id: emma.id })).status).toBe(402);
    await svc.app.db.updateTable('credit_holds').set({ expires_at: new Date(Date.now() - 1000) }).where('id', '=', 'once:dead').execute();
    expect((await tts(other.key, { text: 'The hold has expired.', voice_id: emma.id })).status).toBe(201);
    expect(await footprint(other.teamId)).toEqual({ used: 1, voiceovers: 1, ledger: 1, idempotencyKeys: 0, files: 1 });
  });
});
