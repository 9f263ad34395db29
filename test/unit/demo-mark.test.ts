import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import type { EngineJob } from '../../src/adapters/engines/render-job.ts';
import { imageScene } from '../../src/adapters/engines/local/images.ts';
import { demoBadgeBox } from '../../src/adapters/engines/local/demo-mark.ts';
import { ImageCache, renderScene } from '../../src/adapters/engines/local/scene.ts';
import { canRenderText } from '../../src/adapters/engines/local/text.ts';

/** A text-to-image job as the local engine receives it, in near-white brand colours so a dark mark stands out. */
const job = (width: number, height: number) =>
  ({
    operation: 'text-to-image',
    generationId: '00000000-0000-4000-8000-000000000001',
    prompt: 'a red sneaker on white',
    width,
    height,
    quantity: 1,
    referenceImages: [],
    productImages: [],
    brand: { name: undefined, colorPrimary: '#f4f4f4', colorAccent: '#fafafa' },
    params: {},
  }) as unknown as EngineJob;

/** Luminance (0-255) of each pixel of a region of a PNG. */
async function region(png: Buffer, box: { x: number; y: number; w: number; h: number }): Promise<number[]> {
  const { data, info } = await sharp(png).extract({ left: box.x, top: box.y, width: box.w, height: box.h }).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const out: number[] = [];
  for (let i = 0; i < data.length; i += info.channels) out.push(0.2126 * data[i]! + 0.7152 * data[i + 1]! + 0.0722 * data[i + 2]!);
  return out;
}
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

describe('the demo mark on the local engine\'s pictures', () => {
  for (const [w, h] of [[1024, 1024], [1920, 1080], [256, 448]] as const) {
    it(`a ${w}x${h} render carries a dark "DEMO RENDER — not AI" badge in its top-right corner, with white words where fonts exist`, async () => {
      const png = await renderScene(imageScene(job(w, h), 0), new ImageCache());
      expect(await sharp(png).metadata()).toMatchObject({ width: w, height: h });
      const box = demoBadgeBox(w, h);
      expect(box.x + box.w).toBeLessThanOrEqual(w);
      expect(box.w).toBeGreaterThan(box.h * 4);
      const inside = await region(png, box);
      // The same-sized region at the other top corner is the bright backdrop: the mark, not the picture, darkens the corner.
      const elsewhere = await region(png, { ...box, x: 0 });
      expect(mean(elsewhere)).toBeGreaterThan(180);
      expect(mean(inside)).toBeLessThan(mean(elsewhere) - 80);
      const white = inside.filter((l) => l > 200).length;
      if (await canRenderText()) expect(white / inside.length).toBeGreaterThan(0.04);
    });
  }
});
