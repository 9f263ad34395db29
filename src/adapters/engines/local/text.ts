import sharp from 'sharp';

/** librsvg resolves these through fontconfig; the first one installed wins. */
export const FONT_FAMILY = "'DejaVu Sans', 'Liberation Sans', 'Noto Sans', Arial, Helvetica, sans-serif";

/** Rough advance of one bold glyph in ems; wrapping needs no exact metrics, only a safe margin. */
const BOLD_CHAR_EM = 0.64;

export function escapeXml(text: string): string {
  return text.replace(/[<>&'"]/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Control characters make the SVG invalid XML; the failure markers are not for display. */
export function displayText(text: string): string {
  return text
    .replace(/\[\[(fail|flaky)\]\]/gi, '')
    .replace(/[\u0000-\u001f\u007f\ufffe\uffff]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/** Greedy word wrap to `maxChars` per line; overlong words are cut, excess lines end with an ellipsis. */
export function wrapText(text: string, maxChars: number, maxLines: number): string[] {
  const limit = Math.max(1, Math.floor(maxChars));
  const words = displayText(text).split(' ').filter(Boolean).flatMap((w) => chunk(w, limit));
  const lines: string[] = [];
  let line = '';
  for (const word of words) {
    if (line && line.length + 1 + word.length > limit) {
      lines.push(line);
      line = word;
    } else {
      line = line ? `${line} ${word}` : word;
    }
  }
  if (line) lines.push(line);
  if (lines.length <= maxLines) return lines;
  const kept = lines.slice(0, maxLines);
  const last = kept[maxLines - 1] ?? '';
  kept[maxLines - 1] = `${last.slice(0, Math.max(0, limit - 1))}…`;
  return kept;
}

function chunk(word: string, size: number): string[] {
  const parts: string[] = [];
  for (let i = 0; i < word.length; i += size) parts.push(word.slice(i, i + size));
  return parts;
}

export interface FittedText {
  fontSize: number;
  lines: string[];
}

/** The largest font size (down to `minFont`) at which the text wraps into the box. */
export function fitText(text: string, boxW: number, boxH: number, maxFont: number, minFont: number, lineHeight = 1.2): FittedText {
  let fontSize = Math.max(minFont, Math.floor(maxFont));
  for (;;) {
    const maxChars = boxW / (fontSize * BOLD_CHAR_EM);
    const maxLines = Math.max(1, Math.floor(boxH / (fontSize * lineHeight)));
    const lines = wrapText(text, maxChars, maxLines);
    const fits = lines.length === 0 || !lines[lines.length - 1]?.endsWith('…');
    if (fits || fontSize <= minFont) return { fontSize, lines };
    fontSize = Math.max(minFont, Math.floor(fontSize * 0.88));
  }
}

let textCheck: Promise<boolean> | undefined;

/**
 * Whether SVG text renders with a real font. Without any font, pango still draws a same-size
 * "missing glyph" box for every character; then a line of `W` is as wide as a line of `i`.
 * Callers leave text out rather than paint boxes.
 */
export function canRenderText(): Promise<boolean> {
  textCheck ??= Promise.all([inkWidth('iiiiiiiiii'), inkWidth('WWWWWWWWWW')])
    .then(([narrow, wide]) => narrow > 0 && wide > narrow * 1.6)
    .catch(() => false);
  return textCheck;
}

async function inkWidth(sample: string): Promise<number> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="800" height="60"><text x="4" y="44" font-family="${FONT_FAMILY}" font-weight="bold" font-size="40">${sample}</text></svg>`;
  const { data, info } = await sharp(Buffer.from(svg)).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  let min = info.width;
  let max = -1;
  for (let y = 0; y < info.height; y++) {
    for (let x = 0; x < info.width; x++) {
      if ((data[(y * info.width + x) * info.channels + 3] ?? 0) > 0) {
        if (x < min) min = x;
        if (x > max) max = x;
      }
    }
  }
  return max < 0 ? 0 : max - min + 1;
}
