import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { inputArgs, runFfmpeg, writeMedia } from '../ffmpeg.ts';

/** The same MP4 with its sound track removed; the picture is copied, not re-encoded. */
export async function withoutSound(video: Buffer): Promise<Buffer> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'adforge-mute-'));
  try {
    const input = await writeMedia(dir, 'in', video, 'video');
    await runFfmpeg([...inputArgs(input), '-map', '0:v', '-c:v', 'copy', '-an', '-movflags', '+faststart', path.join(dir, 'out.mp4')], { timeoutMs: 120_000 });
    return await fs.readFile(path.join(dir, 'out.mp4'));
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}
