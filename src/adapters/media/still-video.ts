import fs from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';
import { openWith, runFfmpeg } from '../engines/ffmpeg.ts';
import { withTempDir } from '../engines/local/temp.ts';

/**
 * A face image as a silent H.264 MP4 of the given length (25 fps, even size, at most 1080 on its
 * long side): for lip-sync providers that animate a video, never a still (sync.so). The same
 * image and length give the same bytes on any machine (one encoder thread, bit-exact muxing): a
 * submit resent under its idempotency key must carry exactly what the first one did.
 */
export async function stillVideo(image: Buffer, seconds: number, signal?: AbortSignal): Promise<Buffer> {
  return withTempDir(undefined, async (dir) => {
    // ffmpeg reads only a PNG we made: the face is decoded by sharp, whatever it was sent as.
    const input = path.join(dir, 'face.png');
    const output = path.join(dir, 'face.mp4');
    await sharp(image, { failOn: 'none' }).png().toFile(input);
    const scale = "scale='min(1080,iw)':'min(1080,ih)':force_original_aspect_ratio=decrease,scale=trunc(iw/2)*2:trunc(ih/2)*2,format=yuv420p";
    await runFfmpeg(
      ['-loop', '1', '-framerate', '25', ...openWith('image2'), '-i', input, '-t', Math.max(1, seconds).toFixed(2), '-vf', scale, '-c:v', 'libx264', '-threads', '1', '-preset', 'veryfast', '-tune', 'stillimage', '-an', '-fflags', '+bitexact', '-flags:v', '+bitexact', '-map_metadata', '-1', '-movflags', '+faststart', '-y', output],
      { ...(signal ? { signal } : {}), timeoutMs: 300_000 },
    );
    return fs.readFile(output);
  });
}
