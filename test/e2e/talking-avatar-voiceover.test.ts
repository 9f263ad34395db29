import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VOICES } from '../../src/domain/catalogue/voices.ts';
import { startTestService, waitForGeneration, type TestService } from '../support/app.ts';
import { sendBytes, startImageHost } from '../support/image-host.ts';
import { audioEnvelope, correlation, makeMedia, videoInfo } from '../support/media-probe.ts';

let svc: TestService;
let host: Awaited<ReturnType<typeof startImageHost>>;
let avatarId: string;
const emma = VOICES.find((v) => v.name === 'Emma')!;
const james = VOICES.find((v) => v.name === 'James')!;
const MISSING = '00000000-0000-4000-8000-000000000000';

beforeAll(async () => {
  svc = await startTestService({}, { worker: true });
  // 20 s of a talking-like source for speech-to-speech: a tone switched on and off.
  const source = await makeMedia(['-f', 'lavfi', '-i', "sine=frequency=180:duration=20,volume='if(lt(mod(t,1),0.6),1,0.05)':eval=frame", '-c:a', 'pcm_s16le'], 'wav');
  host = await startImageHost({ '/source.wav': sendBytes(source, 'audio/wav') });
  const t = await svc.team();
  avatarId = (await svc.api('GET', '/api/v1/avatars', { key: t.key })).body.data[0].id;
});
afterAll(async () => {
  await host?.close();
  await svc?.close();
});

const used = async (teamId: string) =>
  (await svc.app.db.selectFrom('teams').select('credits_used').where('id', '=', teamId).executeTakeFirstOrThrow()).credits_used;
const talkingAvatar = (key: string, body: Record<string, unknown>) =>
  svc.api('POST', '/api/v1/videos/talking-avatar', { key, body: { avatar_id: avatarId, avatar_type: 'platform', ...body } });

describe('talking-avatar with voiceover_id', () => {
  it('uses the voiceover over script + voice_id: priced by its text, and the video carries its audio', async () => {
    const t = await svc.team({ credits: 500 });
    const text = `${'Our new shoe is light and tough. '.repeat(9)}Try it.`; // 304 characters: two blocks
    const vo = await svc.api('POST', '/api/v1/voiceovers/text-to-speech', { key: t.key, body: { text, voice_id: emma.id } });
    expect(vo.status).toBe(201);
    const before = await used(t.teamId);
    const res = await talkingAvatar(t.key, { voiceover_id: vo.body.id, script: 'ignored', voice_id: james.id });
    expect(res.status).toBe(202);
    expect((await used(t.teamId)) - before).toBe(40);
    const done = await waitForGeneration(svc, t.key, res.body.generation_id, 120_000);
    expect(done.status).toBe('completed');
    expect(done.details).toMatchObject({ script: text, voice_id: emma.id, voiceover_id: vo.body.id });

    const video = (await svc.fetchUrl(done.result_url)).bytes;
    const info = await videoInfo(video);
    expect(info.audioCodec).toBe('aac');
    expect(Math.abs(info.durationSeconds! - vo.body.duration)).toBeLessThan(0.15);
    const voice = (await svc.fetchUrl(vo.body.audio_url)).bytes;
    const [ve, ae] = await Promise.all([audioEnvelope(video), audioEnvelope(voice)]);
    expect(correlation(ve, ae)).toBeGreaterThan(0.9);
    // The measure tells speech apart: the same voice saying something else does not match.
    const other = await svc.api('POST', '/api/v1/voiceovers/text-to-speech', { key: t.key, body: { text: `${'Big sale this weekend, everything must go. '.repeat(7)}Hurry.`, voice_id: emma.id } });
    expect(correlation(ve, await audioEnvelope((await svc.fetchUrl(other.body.audio_url)).bytes))).toBeLessThan(0.5);
  }, 180_000);

  it('prices a speech-to-speech voiceover by 20 credits per started 15 s of its audio', async () => {
    const t = await svc.team({ credits: 500 });
    const vo = await svc.api('POST', '/api/v1/voiceovers/speech-to-speech', { key: t.key, body: { audio_url: host.url('/source.wav'), voice_id: emma.id } });
    expect(vo.status).toBe(201);
    expect(vo.body.duration).toBeCloseTo(20, 0);
    const before = await used(t.teamId);
    const res = await talkingAvatar(t.key, { voiceover_id: vo.body.id });
    expect(res.status).toBe(202);
    expect((await used(t.teamId)) - before).toBe(40);
    const g = await svc.api('GET', `/api/v1/generations/${res.body.generation_id}`, { key: t.key });
    expect(g.body.details).toMatchObject({ voice_id: emma.id, voiceover_id: vo.body.id });
    expect(g.body.details.script ?? null).toBeNull();
  });

  it("answers 404 for another team's voiceover or a missing one, charging nothing", async () => {
    const a = await svc.team({ credits: 50 });
    const b = await svc.team({ credits: 50 });
    const vo = await svc.api('POST', '/api/v1/voiceovers/text-to-speech', { key: a.key, body: { text: 'Only for team A.', voice_id: emma.id } });
    for (const voiceover_id of [vo.body.id, MISSING]) {
      const res = await talkingAvatar(b.key, { voiceover_id });
      expect(res.status).toBe(404);
      expect(res.body.error).toEqual({ code: 'not_found', message: 'Voiceover not found' });
    }
    expect(await used(b.teamId)).toBe(0);
    const n = await sql<{ n: number }>`select count(*)::int as n from generations where team_id = ${b.teamId}`.execute(svc.app.db);
    expect(n.rows[0]!.n).toBe(0);
  });
});

describe('talking-avatar with script + voice_id', () => {
  it('speaks the script with the catalogue voice: the video carries the same speech as a voiceover of that text', async () => {
    const t = await svc.team({ credits: 500 });
    const script = 'Fresh coffee, delivered before you wake up. Start your trial today.';
    const res = await talkingAvatar(t.key, { script, voice_id: james.id });
    expect(res.status).toBe(202);
    const vo = await svc.api('POST', '/api/v1/voiceovers/text-to-speech', { key: t.key, body: { text: script, voice_id: james.id } });
    const done = await waitForGeneration(svc, t.key, res.body.generation_id, 120_000);
    expect(done.status).toBe('completed');
    const video = (await svc.fetchUrl(done.result_url)).bytes;
    const info = await videoInfo(video);
    expect(Math.abs(info.durationSeconds! - vo.body.duration)).toBeLessThan(0.15);
    const [ve, ae] = await Promise.all([audioEnvelope(video), audioEnvelope((await svc.fetchUrl(vo.body.audio_url)).bytes)]);
    expect(correlation(ve, ae)).toBeGreaterThan(0.9);
  }, 180_000);
});
