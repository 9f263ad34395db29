import fs from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';
import type { Box } from './layout.ts';
import { canRenderText, escapeXml, FONT_FAMILY } from './text.ts';

/** The words of the mark every picture and video of the built-in engine carries: it is a demo, not AI. */
export const DEMO_MARK_TEXT = 'DEMO RENDER \u2014 not AI';

/**
 * Where the demo mark sits: the top-right corner, inside the 6% margin band above a picture's
 * headline and logo, sized to the frame (a 10 px font at the least).
 */
export function demoBadgeBox(W: number, H: number): Box & { fontSize: number } {
  const s = Math.min(W, H);
  const fontSize = Math.max(10, Math.round(s * 0.022));
  const h = Math.round(fontSize * 1.6);
  const w = Math.min(W, Math.round(DEMO_MARK_TEXT.length * fontSize * 0.64 + fontSize * 1.4));
  const inset = Math.max(2, Math.round(s * 0.015));
  return { x: Math.max(0, W - inset - w), y: Math.min(inset, Math.max(0, H - h)), w, h, fontSize };
}

/** The badge alone, w x h: a dark pill with the words in white (the pill alone where no font can be drawn: it still shows). */
function badgeSvg(b: Box & { fontSize: number }, withText: boolean): string {
  const text = withText
    ? `<text x="${Math.round(b.w / 2)}" y="${Math.round(b.h / 2 + b.fontSize * 0.36)}" text-anchor="middle" font-family="${FONT_FAMILY}" font-weight="bold" font-size="${b.fontSize}" fill="#ffffff">${escapeXml(DEMO_MARK_TEXT)}</text>`
    : '';
  return `<rect width="${b.w}" height="${b.h}" rx="${Math.round(b.h / 4)}" fill="#000000" fill-opacity="0.78" stroke="#ffffff" stroke-opacity="0.6" stroke-width="1"/>${text}`;
}

/** The badge as a nested <svg> placed in a W x H picture drawn in SVG. */
export function demoBadgeAt(W: number, H: number, withText: boolean): string {
  const b = demoBadgeBox(W, H);
  return `<svg x="${b.x}" y="${b.y}" width="${b.w}" height="${b.h}" overflow="hidden">${badgeSvg(b, withText)}</svg>`;
}

/** The badge as a PNG in `dir`, for ffmpeg to overlay on a W x H video: its file name and place. */
export async function writeDemoBadge(dir: string, W: number, H: number): Promise<{ png: string; x: number; y: number }> {
  const b = demoBadgeBox(W, H);
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${b.w}" height="${b.h}">${badgeSvg(b, await canRenderText())}</svg>`;
  await fs.writeFile(path.join(dir, 'demo-mark.png'), await sharp(Buffer.from(svg)).png().toBuffer());
  return { png: 'demo-mark.png', x: b.x, y: b.y };
}

/** Draws the badge onto a W x H picture (PNG bytes in, PNG bytes out). */
export async function withDemoBadge(png: Buffer): Promise<Buffer> {
  const { width, height } = await sharp(png).metadata();
  const W = width ?? 0;
  const H = height ?? 0;
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}">${demoBadgeAt(W, H, await canRenderText())}</svg>`;
  return sharp(png).composite([{ input: Buffer.from(svg), left: 0, top: 0 }]).png({ compressionLevel: 1 }).toBuffer();
}
