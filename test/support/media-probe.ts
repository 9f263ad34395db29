import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { probeMedia, runFfmpeg, type MediaInfo } from '../../src/adapters/engines/ffmpeg.ts';

export interface ImageInfo {
  format: string;
  width: number;
  height: number;
}

export async function imageInfo(bytes: Buffer): Promise<ImageInfo> {
  const meta = await sharp(bytes).metadata();
  return { format: meta.format, width: meta.width, height: meta.height };
}

export function videoInfo(bytes: Buffer): Promise<MediaInfo> {
  return probeMedia(bytes);
}

/** Mean absolute difference (0-255) of two images scaled to 64x64: 0 means the same picture. */
export async function imageDifference(a: Buffer, b: Buffer): Promise<number> {
  const thumb = (x: Buffer) => sharp(x).resize(64, 64, { fit: 'fill' }).removeAlpha().raw().toBuffer();
  const [pa, pb] = await Promise.all([thumb(a), thumb(b)]);
  let sum = 0;
  for (let i = 0; i < pa.length; i++) sum += Math.abs((pa[i] ?? 0) - (pb[i] ?? 0));
  return sum / pa.length;
}

/** Renders media with an ffmpeg command line ending in an output file name (e.g. a test pattern). */
export async function makeMedia(args: string[], ext: string): Promise<Buffer> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'adforge-test-media-'));
  try {
    const out = path.join(dir, `media.${ext}`);
    await runFfmpeg([...args, out]);
    return await fs.readFile(out);
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

/** A test-pattern MP4 (H.264), with a 440 Hz tone unless `audio` is false. */
export function testVideo(opts: { width: number; height: number; seconds: number; audio?: boolean }): Promise<Buffer> {
  const { width, height, seconds, audio = true } = opts;
  return makeMedia(
    [
      '-f', 'lavfi', '-i', `testsrc=size=${width}x${height}:rate=25:duration=${seconds}`,
      ...(audio ? ['-f', 'lavfi', '-i', `sine=frequency=440:sample_rate=44100:duration=${seconds}`] : []),
      '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p',
      ...(audio ? ['-c:a', 'aac'] : []),
    ],
    'mp4',
  );
}

/** Loudness (RMS) of the sound track per `windowMs`, decoded to 8 kHz mono: an outline of what is said. */
export async function audioEnvelope(bytes: Buffer, windowMs = 50): Promise<number[]> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'adforge-test-audio-'));
  try {
    const input = path.join(dir, 'input');
    const out = path.join(dir, 'audio.raw');
    await fs.writeFile(input, bytes);
    await runFfmpeg(['-i', input, '-vn', '-ac', '1', '-ar', '8000', '-f', 's16le', out]);
    const pcm = await fs.readFile(out);
    const per = (8000 * windowMs) / 1000;
    const env: number[] = [];
    for (let start = 0; start + per * 2 <= pcm.length; start += per * 2) {
      let sum = 0;
      for (let i = 0; i < per; i++) sum += pcm.readInt16LE(start + i * 2) ** 2;
      env.push(Math.sqrt(sum / per));
    }
    return env;
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

/** Pearson correlation of two series over their common length. */
export function correlation(a: number[], b: number[]): number {
  const n = Math.min(a.length, b.length);
  const mean = (x: number[]) => x.slice(0, n).reduce((s, v) => s + v, 0) / n;
  const ma = mean(a);
  const mb = mean(b);
  let cov = 0;
  let va = 0;
  let vb = 0;
  for (let i = 0; i < n; i++) {
    cov += (a[i]! - ma) * (b[i]! - mb);
    va += (a[i]! - ma) ** 2;
    vb += (b[i]! - mb) ** 2;
  }
  return cov / Math.sqrt(va * vb);
}
