import path from 'node:path';
import sharp, { type Sharp } from 'sharp';
import { EngineError } from '../render-job.ts';
import { runFfmpeg } from '../ffmpeg.ts';
import type { RenderContext } from './render-context.ts';
import { stage } from '../progress.ts';

export const FPS = 30;

/** yuv420p needs even dimensions: an odd request is rounded down by one pixel. */
export function evenSize(n: number): number {
  return Math.max(2, Math.floor(n / 2) * 2);
}

export function seconds(n: number): string {
  return n.toFixed(3);
}

/**
 * Output options shared by every video: H.264 yuv420p at a constant 30 fps, moov atom first
 * (+faststart) so players start before the download ends, AAC stereo when there is audio.
 * `-t` cuts every stream at the requested length (inputs are looped or padded to be long enough).
 */
export function mp4Output(duration: number, hasAudio: boolean): string[] {
  return [
    '-map', '[v]',
    ...(hasAudio ? ['-map', '[a]'] : []),
    '-t', seconds(duration),
    '-r', String(FPS),
    '-c:v', 'libx264', '-preset', 'veryfast', '-crf', '23', '-pix_fmt', 'yuv420p',
    ...(hasAudio ? ['-c:a', 'aac', '-b:a', '128k', '-ar', '48000', '-ac', '2'] : ['-an']),
    '-movflags', '+faststart',
  ];
}

/** Runs ffmpeg in `dir` with `args` (inputs, filters, mp4Output) and returns the path of the MP4 it wrote. */
export async function encode(dir: string, args: string[], ctx: RenderContext): Promise<string> {
  const out = path.join(dir, 'out.mp4');
  // Every local video ends here: its pictures and sound are ready, ffmpeg makes the MP4.
  ctx.progress?.(stage('encoding the video', 0.5));
  await runFfmpeg([...args, out], { signal: ctx.signal, timeoutMs: ctx.timeoutMs, cwd: dir });
  return out;
}

/** Writes an input image as a PNG the size of the frame (ffmpeg then only ever reads PNGs we made). */
export async function writeImage(dir: string, name: string, pipeline: Sharp): Promise<string> {
  const file = path.join(dir, name);
  await pipeline.png({ compressionLevel: 1 }).toFile(file);
  return file;
}

/** Avatar frame: the picture whole, over a blurred, dimmed copy of itself filling the rest. */
export async function fitOnBlur(bytes: Buffer, W: number, H: number): Promise<Sharp> {
  try {
    const [bg, fg] = await Promise.all([
      sharp(bytes, { failOn: 'none' }).rotate().resize(W, H, { fit: 'cover' }).blur(Math.max(2, Math.min(W, H) / 40)).modulate({ brightness: 0.6 }).removeAlpha().toBuffer(),
      sharp(bytes, { failOn: 'none' }).rotate().resize(W, H, { fit: 'inside' }).png().toBuffer(),
    ]);
    return sharp(bg).composite([{ input: fg, gravity: 'centre' }]);
  } catch (err) {
    throw new EngineError('an input image could not be read', { transient: false, cause: err });
  }
}
