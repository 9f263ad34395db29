import fs from 'node:fs/promises';
import path from 'node:path';
import type { EngineFile, EngineJob } from '../render-job.ts';
import type { RenderContext } from './render-context.ts';
import { step } from '../progress.ts';
import { hashString, mix, paletteFor, parseHex } from './palette.ts';
import { ImageCache, renderScene, type Scene } from './scene.ts';
import { displayText } from './text.ts';

/** Renders text-to-image, image-edit and product-shots: `job.quantity` PNGs of exactly width x height, written to `outDir`. */
export async function renderImages(job: EngineJob, outDir: string, ctx: RenderContext): Promise<EngineFile[]> {
  const cache = new ImageCache();
  const count = Math.max(1, Math.floor(job.quantity));
  const scenes = Array.from({ length: count }, (_, variant) => imageScene(job, variant));
  // Two at a time keeps a small machine's cores busy; more in flight mostly costs memory
  // (a 4k image is ~64 MB of pixels while it is composed).
  const out: EngineFile[] = new Array(count);
  let next = 0;
  let failed = false;
  let drawn = 0;
  const worker = async () => {
    while (next < scenes.length && !failed) {
      const i = next++;
      ctx.signal.throwIfAborted();
      const scene = scenes[i];
      if (scene) {
        const file = path.join(outDir, `image-${i + 1}.png`);
        await fs.writeFile(file, await renderScene(scene, cache));
        out[i] = { path: file, mime: 'image/png', ext: 'png' };
      }
      ctx.progress?.(step(++drawn, count, 'rendered image'));
    }
  };
  await Promise.all(
    [worker(), worker()].map((w) =>
      w.catch((err: unknown) => {
        failed = true; // the other worker stops picking up images
        throw err;
      }),
    ),
  );
  ctx.signal.throwIfAborted();
  return out;
}

export function imageScene(job: EngineJob, variant: number): Scene {
  const style = job.operation === 'product-shots' ? styleOf(job.template) : null;
  const palette = paletteFor(style?.from ?? job.brand?.colorPrimary, style?.to ?? job.brand?.colorAccent, variant);
  // An edit works on its first reference image: it becomes the backdrop, the others go on cards.
  const [first, ...otherRefs] = job.referenceImages.map((a) => a.bytes);
  const backdrop = job.operation === 'image-edit' ? first : undefined;
  const refs = backdrop ? otherRefs : job.referenceImages.map((a) => a.bytes);
  const brandRef = job.brand?.reference?.bytes;
  return {
    width: job.width,
    height: job.height,
    headline: displayText(job.prompt),
    variant,
    seed: hashString(`${job.generationId}:${job.prompt}`),
    palette,
    backdrop,
    media: [...job.productImages.map((a) => a.bytes), ...refs, ...(brandRef ? [brandRef] : [])],
    hero: job.operation === 'product-shots',
    logo: job.brand?.logo?.bytes,
    tag: style?.name ?? job.brand?.name,
  };
}

interface Style {
  name: string | undefined;
  from: string | undefined;
  to: string | undefined;
}

/** A style template's look, from whichever known fields it carries (the catalogue shape may grow). */
function styleOf(template: Record<string, unknown> | undefined): Style | null {
  if (!template) return null;
  const listed = [template.colors, template.palette].flatMap((v) => (Array.isArray(v) ? v : [])).map(parseHex);
  const colours = [template.background, template.background_color, template.color, template.primary_color, template.accent_color]
    .map(parseHex)
    .concat(listed)
    .filter((c): c is string => c !== null);
  const name = typeof template.name === 'string' ? displayText(template.name) : '';
  // A background given in words ("white marble") cannot be painted here, so it is named instead.
  const scenery = typeof template.background === 'string' && !parseHex(template.background) ? displayText(template.background) : '';
  const from = colours[0];
  return {
    name: [name, scenery].filter(Boolean).join(' · ') || undefined,
    from,
    to: colours[1] ?? (from ? mix(from, '#000000', 0.3) : undefined),
  };
}
