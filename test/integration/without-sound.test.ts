import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { UnsupportedMediaError } from '../../src/adapters/engines/ffmpeg.ts';
import { withoutSound } from '../../src/adapters/engines/gemini/without-sound.ts';
import { testVideo, videoInfo } from '../support/media-probe.ts';

// A provider video muted through the disk: the temp folder it works in is gone once the result is read or refused.
describe('withoutSound on a streamed video', () => {
  let video: Buffer;
  let tmp: string;
  beforeAll(async () => {
    video = await testVideo({ width: 64, height: 64, seconds: 1, audio: true });
  });
  beforeEach(async () => {
    tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'adforge-mute-test-'));
    vi.stubEnv('TMPDIR', tmp);
  });
  afterEach(async () => {
    vi.unstubAllEnvs();
    await fs.rm(tmp, { recursive: true, force: true });
  });

  // The source in small pieces, as a download delivers it.
  const pieces = (bytes: Buffer) => Readable.from(Array.from({ length: Math.ceil(bytes.length / 4096) }, (_, i) => bytes.subarray(i * 4096, (i + 1) * 4096)));

  it('hands back the picture without its sound track and leaves no temp files once read', async () => {
    expect((await videoInfo(video)).audioCodec).not.toBeNull();
    const muted = Buffer.concat(await (await withoutSound(pieces(video))).toArray());
    const info = await videoInfo(muted);
    expect(info.audioCodec).toBeNull();
    expect([info.width, info.height]).toEqual([64, 64]);
    await vi.waitFor(async () => expect(await fs.readdir(tmp)).toEqual([]));
  });

  it('refuses what is not a video and leaves nothing behind', async () => {
    await expect(withoutSound(pieces(Buffer.alloc(64 * 1024, 7)))).rejects.toBeInstanceOf(UnsupportedMediaError);
    await vi.waitFor(async () => expect(await fs.readdir(tmp)).toEqual([]));
  });

  it('removes its temp folder when the muted stream is dropped unread', async () => {
    const muted = await withoutSound(pieces(video));
    expect((await fs.readdir(tmp)).length).toBe(1);
    muted.destroy();
    await vi.waitFor(async () => expect(await fs.readdir(tmp)).toEqual([]));
  });
});
