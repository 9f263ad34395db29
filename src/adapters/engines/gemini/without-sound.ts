import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { inputArgs, runFfmpeg, writeMedia, type MediaFile } from '../ffmpeg.ts';

/** `input` with its sound track removed, written to `output` (an MP4): the picture is copied, not re-encoded. */
export async function muteVideo(input: MediaFile, output: string, signal?: AbortSignal): Promise<void> {
  await runFfmpeg([...inputArgs(input), '-map', '0:v', '-c:v', 'copy', '-an', '-movflags', '+faststart', output], { timeoutMs: 120_000, ...(signal ? { signal } : {}) });
}

/** The same MP4 with its sound track removed, for a result still read whole (the Veo file read). */
export async function withoutSound(video: Buffer): Promise<Buffer> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'adforge-mute-'));
  try {
    const out = path.join(dir, 'out.mp4');
    await muteVideo(await writeMedia(dir, 'in', video, 'video'), out);
    return await fs.readFile(out);
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}
