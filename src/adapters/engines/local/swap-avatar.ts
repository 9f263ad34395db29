import sharp, { type Sharp } from 'sharp';
import { EngineError, type EngineJob } from '../render-job.ts';
import type { RenderContext } from './render-context.ts';
import { writeImage } from './encode.ts';
import { frameFor, prepareInput, reencode } from './input-video.ts';

/**
 * Face swap as far as a local engine can: no face tracking, so the new face is shown as a round
 * picture-in-picture over the upper middle of the frame, where a presenter's face usually is.
 */
export async function renderSwapAvatar(job: EngineJob, dir: string, ctx: RenderContext): Promise<string> {
  const face = job.avatar ?? job.referenceImages[0];
  if (!face) throw new EngineError('no face image was given', { transient: false });
  const input = await prepareInput(job, dir, ctx);
  const frame = frameFor(job, input);
  const size = Math.max(16, Math.round(Math.min(frame.width, frame.height) * 0.38));
  await writeImage(dir, 'face.png', await roundFace(face.bytes, size));
  const layer = { png: 'face.png', x: Math.round((frame.width - size) / 2), y: Math.round(frame.height * 0.1) };
  return reencode(dir, input, frame, [layer], ctx);
}

async function roundFace(bytes: Buffer, size: number): Promise<Sharp> {
  const r = size / 2;
  const ring = Math.max(2, Math.round(size * 0.03));
  const mask = Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" width="${size}" height="${size}"><circle cx="${r}" cy="${r}" r="${r}"/></svg>`);
  const border = Buffer.from(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${size}" height="${size}"><circle cx="${r}" cy="${r}" r="${r - ring / 2}" fill="none" stroke="#ffffff" stroke-width="${ring}"/></svg>`,
  );
  try {
    // Attention crop keeps the most salient region (the face, in a portrait) inside the circle.
    const round = await sharp(bytes, { failOn: 'none' })
      .rotate()
      .resize(size, size, { fit: 'cover', position: sharp.strategy.attention })
      .ensureAlpha()
      .composite([{ input: mask, blend: 'dest-in' }])
      .png()
      .toBuffer();
    return sharp(round).composite([{ input: border }]);
  } catch (err) {
    throw new EngineError('an input image could not be read', { transient: false, cause: err });
  }
}
