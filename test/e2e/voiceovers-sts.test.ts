import fs from 'node:fs/promises';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VOICES } from '../../src/domain/catalogue/voices.ts';
import { conversionTarget } from '../../src/domain/voice-conversion.ts';
import { probeMedia } from '../../src/adapters/engines/ffmpeg.ts';
import { startTestService, type TestService } from '../support/app.ts';
import { pngBytes, sendBytes, startImageHost } from '../support/image-host.ts';
import { makeMedia } from '../support/media-probe.ts';
import { semitones, toneFrequency, wavBytes, wavSeconds } from '../support/wav.ts';

const MiB = 1024 * 1024;
const olivia = VOICES.find((v) => v.name === 'Olivia')!; // female adult
const james = VOICES.find((v) => v.name === 'James')!; // male adult

let svc: TestService;
let host: Awaited<ReturnType<typeof startImageHost>>;

/** Source files by length in seconds: 8 kHz mono, so each length is exact to the sample. */
const LENGTHS = [3, 29.9, 30, 45, 119.9, 120, 120.1, 120.06];
const wavUrl = (seconds: number) => host.url(`/${seconds}s.wav`);

beforeAll(async () => {
  const [png, videoWithSound, silentVideo, mp3] = await Promise.all([
    pngBytes(),
    makeMedia(['-f', 'lavfi', '-i', 'testsrc=size=64x64:rate=10', '-f', 'lavfi', '-i', 'sine=frequency=200:sample_rate=8000', '-t', '4', '-c:v', 'libx264', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-shortest'], 'mp4'),
    makeMedia(['-f', 'lavfi', '-i', 'testsrc=size=64x64:rate=10', '-t', '3', '-c:v', 'libx264', '-pix_fmt', 'yuv420p'], 'mp4'),
    makeMedia(['-f', 'lavfi', '-i', 'sine=frequency=200:sample_rate=44100', '-t', '5', '-c:a', 'libmp3lame', '-b:a', '64k'], 'mp3'),
  ]);
  // 29.9 s of sound, padded with a JUNK chunk to exactly the 25 MiB limit.
  const atLimit = wavBytes({ samples: 239_200, padTo: 25 * MiB });
  const overLimit = wavBytes({ samples: 239_200, padTo: 25 * MiB + 2 });
  host = await startImageHost({
    ...Object.fromEntries(LENGTHS.map((s) => [`/${s}s.wav`, sendBytes(wavSeconds(s), 'audio/wav')])),
    '/120s-plus-one-sample.wav': sendBytes(wavBytes({ samples: 960_001 }), 'audio/wav'),
    '/tone.mp3': sendBytes(mp3, 'audio/mpeg'),
    '/moved.wav': (_req, res) => res.writeHead(302, { location: '/3s.wav' }).end(),
    '/with-sound.mp4': sendBytes(videoWithSound, 'video/mp4'),
    '/silent.mp4': sendBytes(silentVideo, 'video/mp4'),
    '/notes.txt': sendBytes(Buffer.from('Dear customer,\nthis is a plain text file and not a recording.\n'.repeat(40)), 'text/plain'),
    // Served as audio: the bytes, not the Content-Type, decide.
    '/page.html': sendBytes(Buffer.from('<!doctype html><html><head><title>Hi</title></head><body><p>Not audio</p></body></html>'), 'audio/mpeg'),
    '/picture.png': sendBytes(png, 'audio/wav'),
    '/empty.wav': sendBytes(Buffer.alloc(0), 'audio/wav'),
    '/no-samples.wav': sendBytes(wavBytes({ samples: 0 }), 'audio/wav'),
    '/at-limit.wav': sendBytes(atLimit, 'audio/wav'),
    '/over-limit.wav': sendBytes(overLimit, 'audio/wav'),
    '/over-limit-chunked.wav': sendBytes(overLimit, 'audio/wav', { contentLength: false }),
  });
  svc = await startTestService();
}, 120_000);
afterAll(async () => {
  await host?.close();
  await svc?.close();
});

async function ledgerOf(teamId: string) {
  const t = await svc.app.db.selectFrom('teams').select('credits_used').where('id', '=', teamId).executeTakeFirstOrThrow();
  const v = await sql<{ n: number }>`select count(*)::int as n from voiceovers where team_id = ${teamId}`.execute(svc.app.db);
  const l = await sql<{ n: number; total: number }>`select count(*)::int as n, coalesce(sum(amount), 0)::int as total from credit_ledger where team_id = ${teamId} and kind = 'debit'`.execute(svc.app.db);
  return { used: t.credits_used, voiceovers: v.rows[0]!.n, debits: l.rows[0]!.n, debited: l.rows[0]!.total };
}
const NOTHING = { used: 0, voiceovers: 0, debits: 0, debited: 0 };

const storedFiles = async (teamId: string) =>
  (await fs.readdir(path.join(svc.dataDir, 'files', 'voiceovers', teamId)).catch(() => [] as string[])).filter((f) => f.endsWith('.mp3'));

const sts = (key: string, body: unknown, headers: Record<string, string> = {}) =>
  svc.api('POST', '/api/v1/voiceovers/speech-to-speech', { key, body, headers });

/** Fetches and probes a voiceover's audio: an MP3 whose length agrees with `duration`. */
async function playable(res: { body: { audio_url: string; duration: number } }) {
  const audio = await svc.fetchUrl(res.body.audio_url);
  expect(audio.status).toBe(200);
  expect(audio.headers['content-type']).toBe('audio/mpeg');
  const info = await probeMedia(audio.bytes);
  expect(info.audioCodec).toBe('mp3');
  expect(info.videoCodec).toBeNull();
  expect(Math.abs(info.durationSeconds! - res.body.duration)).toBeLessThan(0.1);
  return audio.bytes;
}

describe('POST /voiceovers/speech-to-speech', () => {
  it('answers 201 with a completed voiceover: a playable MP3 as long as the source, in the chosen voice', async () => {
    const t = await svc.team({ credits: 10 });
    const res = await sts(t.key, { audio_url: wavUrl(3), voice_id: olivia.id });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(['audio_url', 'duration', 'id', 'status']);
    expect(res.body).toMatchObject({ status: 'completed', id: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    expect(Math.abs(res.body.duration - 3)).toBeLessThanOrEqual(0.15);
    const bytes = await playable(res);
    // Converted, not copied: the 200 Hz source tone comes out moved up by the voice's pitch shift.
    const expected = conversionTarget(olivia).pitchSemitones;
    expect(expected).toBeGreaterThan(0);
    expect(Math.abs(semitones(200, await toneFrequency(bytes)) - expected)).toBeLessThan(0.5);
    expect(await ledgerOf(t.teamId)).toEqual({ used: 1, voiceovers: 1, debits: 1, debited: 1 });
    const credits = await svc.api('GET', '/api/v1/account/credits', { key: t.key });
    expect(credits.body).toMatchObject({ credits_used: 1, credits_remaining: 9 });
    const row = await svc.app.db.selectFrom('voiceovers').selectAll().where('id', '=', res.body.id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ kind: 'speech-to-speech', voice_id: olivia.id, source_url: wavUrl(3), source_duration_seconds: 3, credits: 1, text: null });
  });

  it('moves a male voice down and keeps the pitch at similarity_boost 0', async () => {
    const t = await svc.team({ credits: 10 });
    const [down, kept] = await Promise.all([
      sts(t.key, { audio_url: wavUrl(3), voice_id: james.id }),
      sts(t.key, { audio_url: wavUrl(3), voice_id: james.id, voice_settings: { similarity_boost: 0, stability: 0.5 } }),
    ]);
    expect([down.status, kept.status]).toEqual([201, 201]);
    const [downBytes, keptBytes] = await Promise.all([playable(down), playable(kept)]);
    expect(Math.abs(semitones(200, await toneFrequency(downBytes)) - conversionTarget(james).pitchSemitones)).toBeLessThan(0.5);
    expect(Math.abs(semitones(200, await toneFrequency(keptBytes)))).toBeLessThan(0.3);
    const row = await svc.app.db.selectFrom('voiceovers').select('voice_settings').where('id', '=', kept.body.id).executeTakeFirstOrThrow();
    expect(row.voice_settings).toEqual({ similarity_boost: 0, stability: 0.5 });
  });

  it('takes MP3 sources and the sound track of a video', async () => {
    const t = await svc.team({ credits: 10 });
    const [mp3, video] = await Promise.all([
      sts(t.key, { audio_url: host.url('/tone.mp3'), voice_id: olivia.id }),
      sts(t.key, { audio_url: host.url('/with-sound.mp4'), voice_id: olivia.id }),
    ]);
    expect(mp3.status).toBe(201);
    expect(Math.abs(mp3.body.duration - 5)).toBeLessThanOrEqual(0.15);
    expect(video.status).toBe(201);
    expect(Math.abs(video.body.duration - 4)).toBeLessThanOrEqual(0.15);
    await Promise.all([playable(mp3), playable(video)]);
    expect(await ledgerOf(t.teamId)).toEqual({ used: 2, voiceovers: 2, debits: 2, debited: 2 });
  });

  describe.concurrent('prices by the measured length of the source (whole seconds, rounded down)', () => {
    for (const [seconds, credits] of [
      [29.9, 1],
      [30, 2],
      [119.9, 4],
      [120, 4],
    ] as const) {
      it(`${seconds} s costs ${credits}`, async () => {
        const t = await svc.team({ credits: 10 });
        const res = await sts(t.key, { audio_url: wavUrl(seconds), voice_id: olivia.id });
        expect(res.status, res.text).toBe(201);
        expect(Math.abs(res.body.duration - seconds)).toBeLessThanOrEqual(0.15);
        expect(await ledgerOf(t.teamId)).toEqual({ used: credits, voiceovers: 1, debits: 1, debited: credits });
        const balance = await svc.api('GET', '/api/v1/account/credits', { key: t.key });
        expect(balance.body).toEqual({ credits_used: credits, credits_limit: 10, credits_remaining: 10 - credits });
        const row = await svc.app.db.selectFrom('voiceovers').select(['source_duration_seconds', 'credits']).where('id', '=', res.body.id).executeTakeFirstOrThrow();
        expect(row).toEqual({ source_duration_seconds: seconds, credits });
        await playable(res);
      }, 60_000);
    }

    it('refuses 120.1 s with 400 on audio_url and charges nothing', async () => {
      const t = await svc.team({ credits: 10 });
      const res = await sts(t.key, { audio_url: wavUrl(120.1), voice_id: olivia.id });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('validation_error');
      expect(res.body.error.message).toMatch(/^audio_url: .*120\.1 s.*120 s/);
      expect(await ledgerOf(t.teamId)).toEqual(NOTHING);
      expect(await storedFiles(t.teamId)).toEqual([]);
    });

    it('counts 120 s and one sample (what MP3 framing adds to a two-minute file) as 120 s: 4 credits', async () => {
      const t = await svc.team({ credits: 10 });
      const res = await sts(t.key, { audio_url: host.url('/120s-plus-one-sample.wav'), voice_id: olivia.id });
      expect(res.status).toBe(201);
      expect((await ledgerOf(t.teamId)).used).toBe(4);
    }, 60_000);

    it('refuses 120.06 s, past the 50 ms framing allowance', async () => {
      const t = await svc.team({ credits: 10 });
      const res = await sts(t.key, { audio_url: wavUrl(120.06), voice_id: olivia.id });
      expect(res.status).toBe(400);
      expect(res.body.error.message).toBe('audio_url: the audio lasts 120.06 s; speech-to-speech takes at most 120 s');
      expect(await ledgerOf(t.teamId)).toEqual(NOTHING);
    });

    it('the measured length decides, not `duration`: 10 for a 45 s file costs 2', async () => {
      const t = await svc.team({ credits: 10 });
      const res = await sts(t.key, { audio_url: wavUrl(45), voice_id: olivia.id, duration: 10 });
      expect(res.status).toBe(201);
      expect(Math.abs(res.body.duration - 45)).toBeLessThanOrEqual(0.15);
      expect(await ledgerOf(t.teamId)).toEqual({ used: 2, voiceovers: 1, debits: 1, debited: 2 });
    }, 60_000);

    it('and the other way: duration 120 for a 3 s file costs 1', async () => {
      const t = await svc.team({ credits: 10 });
      const res = await sts(t.key, { audio_url: wavUrl(3), voice_id: olivia.id, duration: 120 });
      expect(res.status).toBe(201);
      expect(await ledgerOf(t.teamId)).toEqual({ used: 1, voiceovers: 1, debits: 1, debited: 1 });
    }, 60_000);
  });

  it('takes duration: null as absent', async () => {
    const t = await svc.team({ credits: 10 });
    const res = await sts(t.key, { audio_url: wavUrl(3), voice_id: olivia.id, duration: null, voice_settings: null });
    expect(res.status, res.text).toBe(201);
    expect(await ledgerOf(t.teamId)).toEqual({ used: 1, voiceovers: 1, debits: 1, debited: 1 });
  });

  for (const duration of [0, -5, 120.01, 121, '30']) {
    it(`refuses duration ${JSON.stringify(duration)} with 400 before downloading anything`, async () => {
      const t = await svc.team({ credits: 10 });
      const before = host.hits.length;
      const res = await sts(t.key, { audio_url: wavUrl(3), voice_id: olivia.id, duration });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('validation_error');
      expect(res.body.error.message).toMatch(/^duration: /);
      expect(host.hits.length).toBe(before);
      expect(await ledgerOf(t.teamId)).toEqual(NOTHING);
    });
  }

  const notAudio: [string, string][] = [
    ['a text file', '/notes.txt'],
    ['an HTML page served as audio/mpeg', '/page.html'],
    ['a PNG served as audio/wav', '/picture.png'],
    ['a video without a sound track', '/silent.mp4'],
    ['an empty file', '/empty.wav'],
    ['a WAV header without samples', '/no-samples.wav'],
  ];
  describe.concurrent('sources that are not audio', () => {
    for (const [what, file] of notAudio) {
      it(`refuses ${what} with 400 on audio_url and charges nothing`, async () => {
        const t = await svc.team({ credits: 10 });
        const res = await sts(t.key, { audio_url: host.url(file), voice_id: olivia.id });
        expect(res.status, res.text).toBe(400);
        expect(res.body.error.code).toBe('validation_error');
        expect(res.body.error.message).toMatch(/^audio_url: /);
        expect(await ledgerOf(t.teamId)).toEqual(NOTHING);
        expect(await storedFiles(t.teamId)).toEqual([]);
      });
    }
  });

  it('refuses a URL that answers 404 with 400 on audio_url', async () => {
    const t = await svc.team({ credits: 10 });
    const res = await sts(t.key, { audio_url: host.url('/gone.wav'), voice_id: olivia.id });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/^audio_url: .*404/);
    expect(await ledgerOf(t.teamId)).toEqual(NOTHING);
  });

  it('follows a redirect to the audio, and takes the voice id in capitals', async () => {
    const t = await svc.team({ credits: 10 });
    const res = await sts(t.key, { audio_url: host.url('/moved.wav'), voice_id: james.id.toUpperCase() });
    expect(res.status, res.text).toBe(201);
    expect(Math.abs(res.body.duration - 3)).toBeLessThanOrEqual(0.15);
    const row = await svc.app.db.selectFrom('voiceovers').select(['voice_id', 'source_url']).where('id', '=', res.body.id).executeTakeFirstOrThrow();
    expect(row).toEqual({ voice_id: james.id, source_url: host.url('/moved.wav') });
  });

  it('refuses a URL that is not http(s) with 400', async () => {
    const t = await svc.team({ credits: 10 });
    for (const audio_url of ['ftp://127.0.0.1/a.wav', 'file:///etc/passwd', 'not a url']) {
      const res = await sts(t.key, { audio_url, voice_id: olivia.id });
      expect(res.status, audio_url).toBe(400);
      expect(res.body.error.message).toMatch(/^audio_url: /);
    }
  });

  describe.concurrent('the 25 MiB limit', () => {
    it('takes a file of exactly 25 MiB', async () => {
      const t = await svc.team({ credits: 10 });
      const res = await sts(t.key, { audio_url: host.url('/at-limit.wav'), voice_id: olivia.id });
      expect(res.status, res.text).toBe(201);
      expect(Math.abs(res.body.duration - 29.9)).toBeLessThanOrEqual(0.15);
      expect(await ledgerOf(t.teamId)).toEqual({ used: 1, voiceovers: 1, debits: 1, debited: 1 });
    }, 60_000);

    for (const [what, file] of [
      ['with Content-Length', '/over-limit.wav'],
      ['without Content-Length', '/over-limit-chunked.wav'],
    ] as const) {
      it(`refuses a larger file ${what} with 400 and charges nothing`, async () => {
        const t = await svc.team({ credits: 10 });
        const res = await sts(t.key, { audio_url: host.url(file), voice_id: olivia.id });
        expect(res.status).toBe(400);
        expect(res.body.error.code).toBe('validation_error');
        expect(res.body.error.message).toMatch(/^audio_url: .*larger than 25 MB/);
        expect(await ledgerOf(t.teamId)).toEqual(NOTHING);
      });
    }
  });

  it('answers 404 for a voice that is not in the catalogue, downloading nothing and charging nothing', async () => {
    const t = await svc.team({ credits: 10 });
    const before = host.hits.length;
    for (const voice_id of ['00000000-0000-4000-8000-000000000000', '21m00Tcm4TlvDq8ikWAM']) {
      const res = await sts(t.key, { audio_url: wavUrl(3), voice_id });
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('not_found');
    }
    expect(host.hits.length).toBe(before);
    expect(await ledgerOf(t.teamId)).toEqual(NOTHING);
  });

  it('answers 402 when the balance is short, stating needed and available credits, and makes nothing', async () => {
    const t = await svc.team({ credits: 1 });
    const res = await sts(t.key, { audio_url: wavUrl(45), voice_id: olivia.id });
    expect(res.status).toBe(402);
    expect(res.body.error).toEqual({ code: 'insufficient_credits', message: expect.stringMatching(/needs 2 credits and 1 are available/) });
    expect(await ledgerOf(t.teamId)).toEqual(NOTHING);
    expect(await storedFiles(t.teamId)).toEqual([]);
    // The one credit still buys a short one.
    expect((await sts(t.key, { audio_url: wavUrl(3), voice_id: olivia.id })).status).toBe(201);
    expect(await ledgerOf(t.teamId)).toEqual({ used: 1, voiceovers: 1, debits: 1, debited: 1 });
  });

  it('needs an API key', async () => {
    const res = await svc.api('POST', '/api/v1/voiceovers/speech-to-speech', { body: { audio_url: wavUrl(3), voice_id: olivia.id } });
    expect(res.status).toBe(401);
  });
});

describe('Idempotency-Key on speech-to-speech', () => {
  it('a repeat returns the same voiceover with a working link, downloads nothing more and charges nothing', async () => {
    const t = await svc.team({ credits: 10 });
    const body = { audio_url: wavUrl(30), voice_id: olivia.id };
    const first = await sts(t.key, body, { 'idempotency-key': 'sts-1' });
    expect(first.status).toBe(201);
    const hits = host.hits.length;
    const again = await sts(t.key, body, { 'idempotency-key': 'sts-1' });
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body.id).toBe(first.body.id);
    expect(again.body.duration).toBe(first.body.duration);
    expect(host.hits.length).toBe(hits);
    await playable(again);
    expect(await ledgerOf(t.teamId)).toEqual({ used: 2, voiceovers: 1, debits: 1, debited: 2 });
    expect(await storedFiles(t.teamId)).toHaveLength(1);
  }, 60_000);

  it('concurrent repeats of one key make one voiceover and one charge', async () => {
    const t = await svc.team({ credits: 10 });
    const body = { audio_url: wavUrl(3), voice_id: james.id };
    const results = await Promise.all(Array.from({ length: 4 }, () => sts(t.key, body, { 'idempotency-key': 'sts-race' })));
    expect(results.map((r) => r.status)).toEqual([201, 201, 201, 201]);
    expect(new Set(results.map((r) => r.body.id)).size).toBe(1);
    expect(await ledgerOf(t.teamId)).toEqual({ used: 1, voiceovers: 1, debits: 1, debited: 1 });
    expect(await storedFiles(t.teamId)).toHaveLength(1);
  }, 60_000);

  it('a 402 is kept under its key too: the same request stays refused without being re-measured', async () => {
    const t = await svc.team({ credits: 1 });
    const body = { audio_url: wavUrl(45), voice_id: olivia.id };
    const first = await sts(t.key, body, { 'idempotency-key': 'sts-402' });
    expect(first.status).toBe(402);
    const hits = host.hits.length;
    const again = await sts(t.key, body, { 'idempotency-key': 'sts-402' });
    expect(again.status).toBe(402);
    expect(again.body).toEqual(first.body);
    expect(host.hits.length).toBe(hits);
  });

  it('the same key with another body is a 400', async () => {
    const t = await svc.team({ credits: 10 });
    expect((await sts(t.key, { audio_url: wavUrl(3), voice_id: olivia.id }, { 'idempotency-key': 'sts-2' })).status).toBe(201);
    const res = await sts(t.key, { audio_url: wavUrl(3), voice_id: james.id }, { 'idempotency-key': 'sts-2' });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/different request body/);
    expect((await ledgerOf(t.teamId)).used).toBe(1);
  });
});

describe('the downloader is SSRF-safe', () => {
  it('with private addresses off (as deployed), refuses a loopback audio_url without fetching it', async () => {
    const strict = await startTestService({ ALLOW_PRIVATE_NETWORK_URLS: 'false' });
    try {
      const t = await strict.team({ credits: 10 });
      const before = host.hits.length;
      for (const audio_url of [wavUrl(3), `http://localhost:${host.port}/3s.wav`, 'http://169.254.169.254/latest/meta-data/']) {
        const res = await strict.api('POST', '/api/v1/voiceovers/speech-to-speech', { key: t.key, body: { audio_url, voice_id: olivia.id } });
        expect(res.status, audio_url).toBe(400);
        expect(res.body.error.message).toMatch(/^audio_url: .*(private|reserved)/);
      }
      expect(host.hits.length).toBe(before);
    } finally {
      await strict.close();
    }
  });
});
