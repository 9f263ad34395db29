import fs from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';
import { canRenderText, displayText, escapeXml, FONT_FAMILY, wrapText } from './text.ts';

export interface Cue {
  text: string;
  start: number;
  end: number;
}

/** Short phrases for captions: break after punctuation, or at `maxWords` / `maxChars`. */
export function splitPhrases(text: string, maxWords = 6, maxChars = 36): string[] {
  const phrases: string[] = [];
  let words: string[] = [];
  for (const word of displayText(text).split(' ').filter(Boolean)) {
    if (words.length && (words.length >= maxWords || [...words, word].join(' ').length > maxChars)) {
      phrases.push(words.join(' '));
      words = [];
    }
    words.push(word);
    // A sentence always ends a phrase; a comma only once the phrase has two words.
    if (/[.!?]["')]?$/.test(word) || (/[;:,]$/.test(word) && words.length >= 2)) {
      phrases.push(words.join(' '));
      words = [];
    }
  }
  if (words.length) phrases.push(words.join(' '));
  return phrases;
}

/** Spreads phrases over [lead, duration - lead], each getting time in proportion to its length. */
export function timeCues(phrases: string[], duration: number, lead = 0.2): Cue[] {
  const span = Math.max(0.1, duration - 2 * lead);
  const weights = phrases.map((p) => p.length + 6);
  const total = weights.reduce((a, b) => a + b, 0);
  let t = Math.min(lead, duration / 4);
  return phrases.map((text, i) => {
    const len = (span * (weights[i] ?? 0)) / total;
    const cue = { text, start: t, end: Math.min(duration, t + len) };
    t += len;
    return cue;
  });
}

export interface CaptionStyle {
  fontSize: number;
  color: string;
  /** Outline around the letters, or none. */
  stroke: string | null;
  /** Box behind the text, or none. */
  box: string | null;
  boxOpacity: number;
  uppercase: boolean;
  bold: boolean;
  position: 'top' | 'center' | 'bottom';
}

export function defaultCaptionStyle(width: number, height: number): CaptionStyle {
  return {
    fontSize: Math.max(12, Math.round(Math.min(width, height) * 0.055)),
    color: '#ffffff',
    stroke: null,
    box: '#000000',
    boxOpacity: 0.55,
    uppercase: false,
    bold: true,
    position: 'bottom',
  };
}

export interface CaptionTrack {
  /** An ffconcat list of same-size transparent PNGs, one per cue, with blanks between. */
  listPath: string;
  /** Where the band goes on the frame. */
  x: number;
  y: number;
}

/**
 * Captions become PNGs rendered by sharp (not ffmpeg's drawtext, which needs a font file path):
 * one transparent band per cue, played by ffmpeg's concat demuxer as a single overlay stream,
 * so a two-minute script costs one extra input instead of one per phrase.
 * Null when there is nothing to show or no font to show it with.
 */
export async function writeCaptionTrack(
  dir: string,
  cues: Cue[],
  frame: { width: number; height: number; duration: number },
  style: CaptionStyle,
): Promise<CaptionTrack | null> {
  const shown = cues.filter((c) => c.text && c.end > c.start);
  if (shown.length === 0 || !(await canRenderText())) return null;
  const { width: W, height: H, duration } = frame;
  const lineH = Math.round(style.fontSize * 1.25);
  const pad = Math.round(style.fontSize * 0.4);
  const bandW = W;
  const bandH = Math.min(H, 2 * lineH + 2 * pad);
  const margin = Math.round(H * 0.07);
  const y = style.position === 'top' ? margin : style.position === 'center' ? Math.round((H - bandH) / 2) : H - margin - bandH;

  const blank = await sharp({ create: { width: bandW, height: bandH, channels: 4, background: { r: 0, g: 0, b: 0, alpha: 0 } } }).png().toBuffer();
  await fs.writeFile(path.join(dir, 'cap-blank.png'), blank);
  const entries: string[] = ['ffconcat version 1.0'];
  const add = (file: string, seconds: number) => {
    if (seconds > 0.001) entries.push(`file '${file}'`, `duration ${seconds.toFixed(3)}`);
  };
  let t = 0;
  for (const [i, cue] of shown.entries()) {
    const file = `cap-${i}.png`;
    await fs.writeFile(path.join(dir, file), await captionPng(cue.text, bandW, bandH, lineH, pad, style));
    add('cap-blank.png', cue.start - t);
    add(file, cue.end - Math.max(t, cue.start));
    t = Math.max(t, cue.end);
  }
  add('cap-blank.png', Math.max(0.1, duration - t));
  // The concat demuxer ignores the last entry's duration unless the file is listed once more.
  entries.push("file 'cap-blank.png'");
  const listPath = path.join(dir, 'captions.ffconcat');
  await fs.writeFile(listPath, `${entries.join('\n')}\n`);
  return { listPath, x: 0, y };
}

function captionPng(text: string, w: number, h: number, lineH: number, pad: number, style: CaptionStyle): Promise<Buffer> {
  const shown = style.uppercase ? text.toUpperCase() : text;
  const maxChars = (w * 0.9) / (style.fontSize * (style.bold ? 0.64 : 0.58));
  const lines = wrapText(shown, maxChars, 2);
  const widest = Math.max(...lines.map((l) => l.length));
  const boxW = Math.min(w, Math.round(widest * style.fontSize * 0.64 + 2 * pad));
  const boxH = lines.length * lineH + 2 * pad;
  // Hug the frame edge the band sits on, so one-line captions do not float.
  const boxY = style.position === 'top' ? 0 : style.position === 'center' ? Math.round((h - boxH) / 2) : h - boxH;
  const box = style.box
    ? `<rect x="${Math.round((w - boxW) / 2)}" y="${boxY}" width="${boxW}" height="${boxH}" rx="${pad}" fill="${style.box}" fill-opacity="${style.boxOpacity}"/>`
    : '';
  const stroke = style.stroke
    ? ` stroke="${style.stroke}" stroke-width="${Math.max(1, Math.round(style.fontSize * 0.08))}" paint-order="stroke" stroke-linejoin="round"`
    : '';
  const tspans = lines
    .map((l, i) => `<tspan x="${Math.round(w / 2)}" y="${boxY + pad + Math.round(lineH * 0.8) + i * lineH}">${escapeXml(l)}</tspan>`)
    .join('');
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}">${box}<text text-anchor="middle" font-family="${FONT_FAMILY}" font-size="${style.fontSize}" font-weight="${style.bold ? 'bold' : 'normal'}" fill="${style.color}"${stroke}>${tspans}</text></svg>`;
  return sharp(Buffer.from(svg)).png({ compressionLevel: 1 }).toBuffer();
}
