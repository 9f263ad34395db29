import sharp, { type OverlayOptions, type Sharp } from 'sharp';
import { EngineError } from '../render-job.ts';
import { grid, rotate, split, type Box } from './layout.ts';
import { seededRandom, type Palette } from './palette.ts';
import { demoBadgeAt } from './demo-mark.ts';
import { canRenderText, escapeXml, fitText, FONT_FAMILY } from './text.ts';

/** One still: a brand-coloured poster with the prompt as headline and the given images laid out on it. */
export interface Scene {
  width: number;
  height: number;
  headline: string;
  /** 0-based; changes composition so the images of one job differ. */
  variant: number;
  seed: number;
  palette: Palette;
  /** Covers the frame under a tint (an edited image's source, a video's first frame). */
  backdrop?: Buffer;
  /** Product / reference images, shown on cards (at most 4). */
  media: Buffer[];
  /** Product shot: the first media image is the hero and fills the media area. */
  hero?: boolean;
  logo?: Buffer;
  /** A small label (style name, brand name). */
  tag?: string;
  /** Leave the demo mark off: the caller lays it on itself (a video, over its motion, so it never drifts out of the frame). */
  unmarked?: boolean;
}

interface Pixels {
  data: Buffer;
  width: number;
  height: number;
}

/** Decoded, resized inputs, shared by the variants of one job (they reuse the same cell sizes). */
export class ImageCache {
  readonly #entries = new Map<string, Promise<Pixels>>();

  fit(key: string, bytes: Buffer, w: number, h: number, fit: 'inside' | 'cover'): Promise<Pixels> {
    const id = `${key}:${w}x${h}:${fit}`;
    let entry = this.#entries.get(id);
    if (!entry) {
      entry = decodeFit(bytes, w, h, fit);
      this.#entries.set(id, entry);
    }
    return entry;
  }
}

async function decodeFit(bytes: Buffer, w: number, h: number, fit: 'inside' | 'cover'): Promise<Pixels> {
  try {
    const { data, info } = await sharp(bytes, { failOn: 'none' })
      .rotate()
      .resize(Math.max(1, w), Math.max(1, h), { fit })
      .ensureAlpha()
      .raw()
      .toBuffer({ resolveWithObject: true });
    return { data, width: info.width, height: info.height };
  } catch (err) {
    throw new EngineError('an input image could not be read', { transient: false, cause: err });
  }
}

const MAX_MEDIA = 4;

export async function renderScene(scene: Scene, cache: ImageCache, compressionLevel = 2): Promise<Buffer> {
  const { width: W, height: H, variant } = scene;
  const s = Math.min(W, H);
  const m = Math.round(s * 0.06);
  const rand = seededRandom(scene.seed ^ Math.imul(variant + 1, 0x9e3779b9));
  const withText = await canRenderText();
  const logoSize = scene.logo ? Math.round(s * 0.13) : 0;
  const tagFont = Math.max(10, Math.round(s * 0.03));
  const tag = withText && scene.tag ? scene.tag.slice(0, 60) : '';

  // Reserve bands for the logo (top) and the tag (bottom) so nothing overlaps them.
  const top = m + (logoSize ? logoSize + Math.round(m * 0.5) : 0);
  const bottom = H - m - (tag ? Math.round(tagFont * 2.4) : 0);
  const content: Box = { x: m, y: top, w: W - 2 * m, h: Math.max(1, bottom - top) };
  const media = rotate(scene.media.slice(0, scene.hero ? 1 : MAX_MEDIA), variant);
  const { textBox, mediaBox } = split(content, media.length > 0, W >= H * 1.2, variant, scene.hero === true, m);
  const cells = mediaBox ? grid(mediaBox, media.length, Math.round(m * 0.5)) : [];

  // Headline and tag are drawn in the same SVG pass as the background: at 4k a second full-size
  // raster plus a composite of it costs more than the rest of the picture.
  const marks: string[] = [];
  if (withText && scene.headline) marks.push(headlineSvg(scene.headline, textBox, s, scene.palette.ink, scene.backdrop !== undefined, variant));
  if (tag) marks.push(tagSvg(tag, tagFont, scene.palette.ink, m, H - m - Math.round(tagFont * 1.8), W - 2 * m));
  // Last, so nothing covers it: this picture is a demo render, not AI.
  if (!scene.unmarked) marks.push(demoBadgeAt(W, H, withText));
  const svg = Buffer.from(backgroundSvg(scene, rand, cells, scene.backdrop !== undefined, marks.join('\n')));

  const layers: OverlayOptions[] = [];
  let base: Sharp;
  if (scene.backdrop) {
    const px = await cache.fit('backdrop', scene.backdrop, W, H, 'cover');
    base = sharp(px.data, { raw: { width: px.width, height: px.height, channels: 4 } });
    layers.push({ input: svg });
  } else {
    base = sharp(svg);
  }
  for (const [i, cell] of cells.entries()) {
    const bytes = media[i];
    if (!bytes) continue;
    const pad = Math.round(Math.min(cell.w, cell.h) * 0.06);
    const px = await cache.fit(`media${scene.media.indexOf(bytes)}`, bytes, cell.w - 2 * pad, cell.h - 2 * pad, 'inside');
    layers.push(rawLayer(px, cell.x + Math.round((cell.w - px.width) / 2), cell.y + Math.round((cell.h - px.height) / 2)));
  }
  if (scene.logo && logoSize > 0) {
    const px = await cache.fit('logo', scene.logo, logoSize, logoSize, 'inside');
    const left = variant % 2 === 0 ? W - m - px.width : m;
    layers.push(rawLayer(px, left, m));
  }
  // One composite call: sharp keeps only the last list given to composite().
  return (layers.length ? base.composite(layers) : base).removeAlpha().png({ compressionLevel, adaptiveFiltering: false }).toBuffer();
}

function rawLayer(px: Pixels, left: number, top: number): OverlayOptions {
  return { input: px.data, raw: { width: px.width, height: px.height, channels: 4 }, left: Math.max(0, left), top: Math.max(0, top) };
}

/** Gradient, decorative shapes, media cards and `marks` (text); over a backdrop the gradient is a translucent tint. */
function backgroundSvg(scene: Scene, rand: () => number, cells: Box[], overBackdrop: boolean, marks: string): string {
  const { width: W, height: H, palette } = scene;
  const s = Math.min(W, H);
  const angle = rand() * Math.PI * 2;
  const [x1, y1, x2, y2] = [0.5 - Math.cos(angle) / 2, 0.5 - Math.sin(angle) / 2, 0.5 + Math.cos(angle) / 2, 0.5 + Math.sin(angle) / 2];
  const shapes: string[] = [];
  const count = 3 + Math.floor(rand() * 3);
  for (let i = 0; i < count; i++) {
    const r = s * (0.08 + rand() * 0.35);
    const fill = rand() < 0.5 ? '#ffffff' : palette.to;
    shapes.push(`<circle cx="${(rand() * W).toFixed(0)}" cy="${(rand() * H).toFixed(0)}" r="${r.toFixed(0)}" fill="${fill}" fill-opacity="${(0.06 + rand() * 0.12).toFixed(2)}"/>`);
  }
  const stripeY = (0.2 + rand() * 0.6) * H;
  shapes.push(
    `<rect x="${-W}" y="${stripeY.toFixed(0)}" width="${3 * W}" height="${(s * (0.05 + rand() * 0.1)).toFixed(0)}" fill="#ffffff" fill-opacity="0.08" transform="rotate(${(-25 + rand() * 50).toFixed(1)} ${W / 2} ${H / 2})"/>`,
  );
  const rx = Math.round(s * 0.02);
  const cards = cells.map((c) => `<rect x="${c.x}" y="${c.y}" width="${c.w}" height="${c.h}" rx="${rx}" fill="#ffffff" fill-opacity="0.9"/>`);
  const tint = overBackdrop ? 0.4 : 1;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}">
<defs><linearGradient id="g" x1="${x1.toFixed(3)}" y1="${y1.toFixed(3)}" x2="${x2.toFixed(3)}" y2="${y2.toFixed(3)}"><stop offset="0" stop-color="${palette.from}"/><stop offset="1" stop-color="${palette.to}"/></linearGradient></defs>
<rect width="${W}" height="${H}" fill="url(#g)" fill-opacity="${tint}"/>
${overBackdrop ? '' : shapes.join('\n')}
${cards.join('\n')}
${marks}
</svg>`;
}

/** A nested <svg> at `box`: its own coordinates, clipped to the box. */
function nested(x: number, y: number, w: number, h: number, inner: string): string {
  return `<svg x="${x}" y="${y}" width="${w}" height="${h}" overflow="hidden">${inner}</svg>`;
}

function headlineSvg(text: string, box: Box, s: number, ink: string, overBackdrop: boolean, variant: number): string {
  const pad = overBackdrop ? Math.round(s * 0.025) : 0;
  const { fontSize, lines } = fitText(text, box.w - 2 * pad, box.h - 2 * pad, s * 0.11, Math.max(10, s * 0.022));
  if (lines.length === 0) return '';
  const lineH = Math.round(fontSize * 1.2);
  const blockH = lines.length * lineH;
  const centred = variant % 3 === 1;
  const x = centred ? box.w / 2 : pad;
  const y0 = Math.max(pad, Math.round((box.h - blockH) / 2)) + Math.round(fontSize * 0.95);
  const shadowInk = ink === '#ffffff' ? '#000000' : '#ffffff';
  const off = Math.max(1, Math.round(fontSize * 0.04));
  const tspans = (dx: number, dy: number) =>
    lines.map((l, i) => `<tspan x="${(x + dx).toFixed(0)}" y="${y0 + dy + i * lineH}">${escapeXml(l)}</tspan>`).join('');
  // Over a photo the text sits on a dark panel so it stays readable whatever the picture.
  const panelY = Math.max(0, y0 - Math.round(fontSize * 0.95) - pad);
  const panel = overBackdrop
    ? `<rect x="0" y="${panelY}" width="${box.w}" height="${Math.min(box.h - panelY, blockH + 2 * pad)}" rx="${pad}" fill="#000000" fill-opacity="0.45"/>`
    : '';
  const anchor = centred ? 'middle' : 'start';
  const font = `font-family="${FONT_FAMILY}" font-weight="bold" font-size="${fontSize}" text-anchor="${anchor}"`;
  return nested(
    box.x,
    box.y,
    box.w,
    box.h,
    `${panel}<text ${font} fill="${shadowInk}" fill-opacity="0.3">${tspans(off, off)}</text><text ${font} fill="${overBackdrop ? '#ffffff' : ink}">${tspans(0, 0)}</text>`,
  );
}

function tagSvg(text: string, fontSize: number, ink: string, x: number, y: number, maxW: number): string {
  const fitChars = Math.max(1, Math.floor((maxW - fontSize * 1.6) / (fontSize * 0.62)));
  const tag = text.length > fitChars ? `${text.slice(0, Math.max(1, fitChars - 1))}…` : text;
  const w = Math.min(maxW, Math.round(tag.length * fontSize * 0.62 + fontSize * 1.6));
  const h = Math.round(fontSize * 1.8);
  const bg = ink === '#ffffff' ? '#000000' : '#ffffff';
  return nested(
    x,
    y,
    w,
    h,
    `<rect width="${w}" height="${h}" rx="${Math.round(h / 2)}" fill="${bg}" fill-opacity="0.35"/><text x="${Math.round(fontSize * 0.8)}" y="${Math.round(h / 2 + fontSize * 0.36)}" font-family="${FONT_FAMILY}" font-size="${fontSize}" fill="${ink}">${escapeXml(tag)}</text>`,
  );
}
