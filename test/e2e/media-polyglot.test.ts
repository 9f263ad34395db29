import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PLATFORM_AVATARS } from '../../src/domain/catalogue/platform-avatars.ts';
import { VOICES } from '../../src/domain/catalogue/voices.ts';
import { startTestService, waitForGeneration, type TestService } from '../support/app.ts';
import { sendBytes, startImageHost } from '../support/image-host.ts';
import { makeMedia } from '../support/media-probe.ts';

/*
 * Media polyglots: a file that opens as an HLS playlist (`#EXTM3U`) naming other media, followed by
 * a raw stream that a prober recognises as H.264 or MP3. An ffmpeg left to guess the container reads
 * the playlist and loads what it names: a URL (a request from the worker to wherever the user
 * points) or a file on the worker's disk (another team's video, rendered into the user's ad).
 * Input media must be refused before ffmpeg sees it, and ffmpeg must only ever open it with the
 * demuxer we chose and the file protocol.
 */

let svc: TestService;
let host: Awaited<ReturnType<typeof startImageHost>>;
/** Stands for an internal service: it records every request and must see none. */
let internal: Awaited<ReturnType<typeof startImageHost>>;
let secretDir: string;

const AVATAR = PLATFORM_AVATARS[0]!.id;
const olivia = VOICES.find((v) => v.name === 'Olivia')!;

const playlist = (segment: string, seconds: number) =>
  Buffer.from(`#EXTM3U\n#EXT-X-TARGETDURATION:${seconds}\n#EXTINF:${seconds},\n${segment}\n#EXT-X-ENDLIST\n`);

beforeAll(async () => {
  secretDir = await fs.mkdtemp(path.join(os.tmpdir(), 'adforge-polyglot-secret-'));
  internal = await startImageHost();
  const [rawVideo, rawAudio, secretVideo, secretAudio] = await Promise.all([
    makeMedia(['-f', 'lavfi', '-i', 'testsrc=size=64x64:rate=10', '-t', '2', '-c:v', 'libx264', '-pix_fmt', 'yuv420p', '-f', 'h264'], 'h264'),
    makeMedia(['-f', 'lavfi', '-i', 'sine=frequency=300:sample_rate=44100', '-t', '3', '-c:a', 'libmp3lame', '-id3v2_version', '0', '-write_xing', '0', '-f', 'mp3'], 'mp3'),
    makeMedia(['-f', 'lavfi', '-i', 'testsrc2=size=64x64:rate=10', '-t', '2', '-c:v', 'libx264', '-pix_fmt', 'yuv420p'], 'ts'),
    makeMedia(['-f', 'lavfi', '-i', 'sine=frequency=900:sample_rate=44100', '-t', '3', '-c:a', 'mp2'], 'ts'),
  ]);
  // Files "of another team" on the worker's disk, with an extension ffmpeg's HLS reader takes.
  await fs.writeFile(path.join(secretDir, 'video.ts'), secretVideo);
  await fs.writeFile(path.join(secretDir, 'audio.ts'), secretAudio);
  host = await startImageHost({
    '/url-video.mp4': sendBytes(Buffer.concat([playlist(internal.url('/segment.ts'), 2), rawVideo]), 'video/mp4'),
    '/file-video.mp4': sendBytes(Buffer.concat([playlist(path.join(secretDir, 'video.ts'), 2), rawVideo]), 'video/mp4'),
    '/url-audio.mp3': sendBytes(Buffer.concat([playlist(internal.url('/segment.ts'), 3), rawAudio]), 'audio/mpeg'),
    '/file-audio.mp3': sendBytes(Buffer.concat([playlist(path.join(secretDir, 'audio.ts'), 3), rawAudio]), 'audio/mpeg'),
  });
  svc = await startTestService({ GENERATION_MAX_ATTEMPTS: '1' }, { worker: true });
}, 120_000);
afterAll(async () => {
  await svc?.close();
  await host?.close();
  await internal?.close();
  if (secretDir) await fs.rm(secretDir, { recursive: true, force: true });
});

async function ledger(teamId: string) {
  const r = await sql<{ kind: string; amount: number }>`select kind, amount from credit_ledger where team_id = ${teamId} order by created_at, kind`.execute(svc.app.db);
  return r.rows;
}

const videoOps: [string, (url: string) => Record<string, unknown>][] = [
  ['/videos/edit', (video_url) => ({ template_id: 'bold-pop', video_url })],
  ['/videos/swap-avatar', (video_url) => ({ video_url, mode: 'standard', duration: 2, width: 64, height: 64, avatar_id: AVATAR, avatar_type: 'platform' })],
  ['/videos/localize', (video_url) => ({ video_url, mode: 'speed', output_language: 'es', duration: 2, width: 64, height: 64 })],
];

describe.concurrent('an HLS polyglot as video_url', () => {
  for (const [route, body] of videoOps) {
    for (const [what, file] of [['naming an internal URL', '/url-video.mp4'], ['naming a file on the worker', '/file-video.mp4']]) {
      it(`${route}, ${what}: the generation fails saying which containers are taken, refunded, nothing fetched`, async () => {
        const t = await svc.team({ credits: 200 });
        const res = await svc.api('POST', `/api/v1${route}`, { key: t.key, body: body(host.url(file!)) });
        expect(res.status, res.text).toBe(202);
        const done = await waitForGeneration(svc, t.key, res.body.generation_id);
        expect(done.status).toBe('failed');
        expect(done.error).toBe('the input video is not a file we take: MP4, MOV, WebM or Matroska');
        const rows = await ledger(t.teamId);
        expect(rows.map((r) => r.kind)).toEqual(['debit', 'refund']);
        expect(rows[0]!.amount + rows[1]!.amount).toBe(0);
        expect(internal.hits).toEqual([]);
      });
    }
  }
});

describe.concurrent('an HLS polyglot as speech-to-speech audio_url', () => {
  for (const [what, file] of [['naming an internal URL', '/url-audio.mp3'], ['naming a file on the worker', '/file-audio.mp3']]) {
    it(`${what}: 400 on audio_url, nothing charged, nothing fetched`, async () => {
      const t = await svc.team({ credits: 10 });
      const res = await svc.api('POST', '/api/v1/voiceovers/speech-to-speech', { key: t.key, body: { audio_url: host.url(file!), voice_id: olivia.id } });
      expect(res.status, res.text).toBe(400);
      expect(res.body.error.code).toBe('validation_error');
      expect(res.body.error.message).toMatch(/^audio_url: /);
      expect(await ledger(t.teamId)).toEqual([]);
      expect(internal.hits).toEqual([]);
    });
  }
});
