import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { finished, type Readable } from 'node:stream';
import { inputArgs, runFfmpeg, writeMediaStream, type MediaFile } from '../ffmpeg.ts';

/** `input` with its sound track removed, written to `output` (an MP4): the picture is copied, not re-encoded. */
export async function muteVideo(input: MediaFile, output: string, signal?: AbortSignal): Promise<void> {
  await runFfmpeg([...inputArgs(input), '-map', '0:v', '-c:v', 'copy', '-an', '-movflags', '+faststart', output], { timeoutMs: 120_000, ...(signal ? { signal } : {}) });
}

/**
 * A provider video with its sound track removed, through the disk and never whole in memory: the
 * stream is written to a temp file, muted file to file, and the muted file handed back as a stream
 * whose temp folder goes once it is read, fails or is dropped.
 */
export async function withoutSound(video: Readable, signal?: AbortSignal): Promise<Readable> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'adforge-mute-'));
  const removeDir = () => void fs.rm(dir, { recursive: true, force: true }).catch(() => {});
  try {
    const out = path.join(dir, 'out.mp4');
    await muteVideo(await writeMediaStream(dir, 'in', video, 'video', signal), out, signal);
    const muted = createReadStream(out);
    finished(muted, removeDir);
    return muted;
  } catch (e) {
    video.on('error', () => {});
    video.destroy();
    removeDir();
    throw e;
  }
}
