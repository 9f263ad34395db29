import fs from 'node:fs/promises';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VOICES } from '../../src/domain/catalogue/voices.ts';
import { probeMedia } from '../../src/adapters/engines/ffmpeg.ts';
import { startTestService, type TestService } from '../support/app.ts';

let svc: TestService;
const emma = VOICES.find((v) => v.name === 'Emma')!;
const TEXT = 'Meet the trail shoe that keeps up with you. Light, tough, and ready for the mountain. Order yours today.';

beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => {
  await svc?.close();
});

async function ledgerOf(teamId: string) {
  const t = await svc.app.db.selectFrom('teams').select('credits_used').where('id', '=', teamId).executeTakeFirstOrThrow();
  const v = await sql<{ n: number }>`select count(*)::int as n from voiceovers where team_id = ${teamId}`.execute(svc.app.db);
  const l = await sql<{ n: number; total: number }>`select count(*)::int as n, coalesce(sum(amount), 0)::int as total from credit_ledger where team_id = ${teamId} and kind = 'debit'`.execute(svc.app.db);
  return { used: t.credits_used, voiceovers: v.rows[0]!.n, debits: l.rows[0]!.n, debited: l.rows[0]!.total };
}

const tts = (key: string, body: unknown, headers: Record<string, string> = {}) =>
  svc.api('POST', '/api/v1/voiceovers/text-to-speech', { key, body, headers });

describe('POST /voiceovers/text-to-speech', () => {
  it('answers a completed voiceover whose audio plays and lasts what `duration` says; 1 credit', async () => {
    const t = await svc.team({ credits: 10 });
    const res = await tts(t.key, { text: TEXT, voice_id: emma.id });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(['audio_url', 'duration', 'id', 'status']);
    expect(res.body.status).toBe('completed');
    expect(res.body.id).toMatch(/^[0-9a-f-]{36}$/);
    const audio = await svc.fetchUrl(res.body.audio_url);
    expect(audio.status).toBe(200);
    expect(audio.headers['content-type']).toBe('audio/mpeg');
    const info = await probeMedia(audio.bytes);
    expect(info.audioCodec).toBe('mp3');
    expect(Math.abs(info.durationSeconds! - res.body.duration)).toBeLessThan(0.1);
    // Speech at a normal pace: 17 words take several seconds, not a blip or a minute.
    expect(res.body.duration).toBeGreaterThan(3);
    expect(res.body.duration).toBeLessThan(15);
    expect(await ledgerOf(t.teamId)).toEqual({ used: 1, voiceovers: 1, debits: 1, debited: 1 });
  });

  it('signs audio_url for one hour', async () => {
    const t = await svc.team({ credits: 10 });
    const before = Math.floor(Date.now() / 1000);
    const res = await tts(t.key, { text: 'Short and sweet.', voice_id: emma.id });
    const expires = Number(new URL(res.body.audio_url).searchParams.get('expires'));
    expect(expires - before).toBeGreaterThanOrEqual(3600 - 5);
    expect(expires - before).toBeLessThanOrEqual(3600 + 5);
  });

  it('speaks each voice with its own engine voice: two voices give different audio', async () => {
    const t = await svc.team({ credits: 10 });
    const james = VOICES.find((v) => v.name === 'James')!;
    const [a, b] = await Promise.all([
      tts(t.key, { text: 'The same words.', voice_id: emma.id }),
      tts(t.key, { text: 'The same words.', voice_id: james.id }),
    ]);
    const [ba, bb] = await Promise.all([svc.fetchUrl(a.body.audio_url), svc.fetchUrl(b.body.audio_url)]);
    expect(ba.bytes.equals(bb.bytes)).toBe(false);
  });

  it('keeps model and voice_settings with the voiceover', async () => {
    const t = await svc.team({ credits: 10 });
    const res = await tts(t.key, { text: 'Settings kept.', voice_id: emma.id, model: 'eleven_multilingual_v2', voice_settings: { stability: 0.4, similarity_boost: 0.9 } });
    expect(res.status).toBe(201);
    const row = await svc.app.db.selectFrom('voiceovers').selectAll().where('id', '=', res.body.id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ kind: 'text-to-speech', text: 'Settings kept.', model: 'eleven_multilingual_v2', voice_settings: { stability: 0.4, similarity_boost: 0.9 }, credits: 1 });
  });

  const refusals: [string, unknown, RegExp][] = [
    ['no text', { voice_id: emma.id }, /^text: /],
    ['empty text', { text: '   ', voice_id: emma.id }, /^text: must not be empty/],
    ['text over 5000 characters', { text: 'a'.repeat(5001), voice_id: emma.id }, /^text: must be at most 5000 characters/],
    ['text not a string', { text: 42, voice_id: emma.id }, /^text: /],
    ['no voice_id', { text: 'hi' }, /^voice_id: /],
    ['stability above 1', { text: 'hi', voice_id: emma.id, voice_settings: { stability: 1.5 } }, /^voice_settings\.stability: must be a number between 0 and 1/],
    ['similarity_boost below 0', { text: 'hi', voice_id: emma.id, voice_settings: { similarity_boost: -0.1 } }, /^voice_settings\.similarity_boost: /],
    ['voice_settings not an object', { text: 'hi', voice_id: emma.id, voice_settings: 'calm' }, /^voice_settings: must be an object/],
    ['model too long', { text: 'hi', voice_id: emma.id, model: 'm'.repeat(101) }, /^model: /],
  ];
  for (const [what, body, message] of refusals) {
    it(`refuses ${what} with 400 and charges nothing`, async () => {
      const t = await svc.team({ credits: 10 });
      const res = await tts(t.key, body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('validation_error');
      expect(res.body.error.message).toMatch(message);
      expect(await ledgerOf(t.teamId)).toEqual({ used: 0, voiceovers: 0, debits: 0, debited: 0 });
    });
  }

  it('accepts exactly 5000 characters', async () => {
    const t = await svc.team({ credits: 10 });
    const res = await tts(t.key, { text: 'Go. '.repeat(1250), voice_id: emma.id });
    expect(res.status).toBe(201);
  }, 60_000);

  it('answers 404 for a voice that is not in the catalogue (UUID or provider-style id), charging nothing', async () => {
    const t = await svc.team({ credits: 10 });
    for (const voice_id of ['00000000-0000-4000-8000-000000000000', '21m00Tcm4TlvDq8ikWAM']) {
      const res = await tts(t.key, { text: 'hi', voice_id });
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('not_found');
    }
    expect(await ledgerOf(t.teamId)).toEqual({ used: 0, voiceovers: 0, debits: 0, debited: 0 });
  });

  it('answers 402 without credits, stating what is needed and available, and makes nothing', async () => {
    const t = await svc.team({ credits: 0 });
    const res = await tts(t.key, { text: 'hi', voice_id: emma.id });
    expect(res.status).toBe(402);
    expect(res.body.error).toEqual({ code: 'insufficient_credits', message: expect.stringMatching(/needs 1 credits and 0 are available/) });
    expect(await ledgerOf(t.teamId)).toEqual({ used: 0, voiceovers: 0, debits: 0, debited: 0 });
  });

  it('charges exactly the balance under concurrency: 8 parallel calls with 5 credits make 5 voiceovers', async () => {
    const t = await svc.team({ credits: 5 });
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => tts(t.key, { text: `Number ${i}.`, voice_id: emma.id })));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([201, 201, 201, 201, 201, 402, 402, 402]);
    expect(await ledgerOf(t.teamId)).toEqual({ used: 5, voiceovers: 5, debits: 5, debited: 5 });
    // The audio of the refused calls was not kept.
    const files = await fs.readdir(path.join(svc.dataDir, 'files', 'voiceovers', t.teamId)).catch(() => []);
    expect(files.filter((f) => f.endsWith('.mp3'))).toHaveLength(5);
  }, 60_000);
});

describe('Idempotency-Key on text-to-speech', () => {
  it('a retry returns the same voiceover with a freshly signed link and charges nothing', async () => {
    const t = await svc.team({ credits: 10 });
    const body = { text: 'Once only.', voice_id: emma.id };
    const first = await tts(t.key, body, { 'idempotency-key': 'tts-1' });
    const again = await tts(t.key, body, { 'idempotency-key': 'tts-1' });
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body.id).toBe(first.body.id);
    expect(again.body.duration).toBe(first.body.duration);
    expect((await svc.fetchUrl(again.body.audio_url)).status).toBe(200);
    expect(await ledgerOf(t.teamId)).toEqual({ used: 1, voiceovers: 1, debits: 1, debited: 1 });
  });

  it('concurrent repeats of one key make one voiceover and one charge', async () => {
    const t = await svc.team({ credits: 10 });
    const body = { text: 'Concurrent, once.', voice_id: emma.id };
    const results = await Promise.all(Array.from({ length: 6 }, () => tts(t.key, body, { 'idempotency-key': 'tts-race' })));
    expect(results.every((r) => r.status === 201)).toBe(true);
    expect(new Set(results.map((r) => r.body.id)).size).toBe(1);
    expect(await ledgerOf(t.teamId)).toEqual({ used: 1, voiceovers: 1, debits: 1, debited: 1 });
    const files = await fs.readdir(path.join(svc.dataDir, 'files', 'voiceovers', t.teamId));
    expect(files.filter((f) => f.endsWith('.mp3'))).toHaveLength(1);
  }, 60_000);

  it('the same key with another body is a 400', async () => {
    const t = await svc.team({ credits: 10 });
    await tts(t.key, { text: 'First.', voice_id: emma.id }, { 'idempotency-key': 'tts-2' });
    const res = await tts(t.key, { text: 'Second.', voice_id: emma.id }, { 'idempotency-key': 'tts-2' });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/different request body/);
    expect((await ledgerOf(t.teamId)).used).toBe(1);
  });
});

describe('a failing engine', () => {
  it('answers 502 external_service_error and leaves the balance, the rows and the files unchanged', async () => {
    const slow = await startTestService({ SPEECH_TIMEOUT_SECONDS: '0.001' });
    try {
      const t = await slow.team({ credits: 10 });
      const before = await slow.api('GET', '/api/v1/account/credits', { key: t.key });
      const res = await slow.api('POST', '/api/v1/voiceovers/text-to-speech', { key: t.key, body: { text: 'This will not be made.', voice_id: emma.id }, headers: { 'idempotency-key': 'fail-1' } });
      expect(res.status).toBe(502);
      expect(res.body.error.code).toBe('external_service_error');
      const after = await slow.api('GET', '/api/v1/account/credits', { key: t.key });
      expect(after.body).toEqual(before.body);
      const n = await sql<{ n: number }>`select count(*)::int as n from voiceovers`.execute(slow.app.db);
      expect(n.rows[0]!.n).toBe(0);
      const keys = await sql<{ n: number }>`select count(*)::int as n from idempotency_keys`.execute(slow.app.db);
      expect(keys.rows[0]!.n).toBe(0); // a 5xx leaves the key usable
      const files = await fs.readdir(path.join(slow.dataDir, 'files', 'voiceovers')).catch(() => []);
      expect(files).toEqual([]);
    } finally {
      await slow.close();
    }
  });
});
