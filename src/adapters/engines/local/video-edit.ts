import path from 'node:path';
import sharp, { type Sharp } from 'sharp';
import type { EngineJob } from '../render-job.ts';
import { defaultCaptionStyle, splitPhrases, timeCues, writeCaptionTrack, type CaptionStyle } from './captions.ts';
import type { RenderContext } from './render-context.ts';
import { languageName } from './localize.ts';
import { parseHex } from './palette.ts';
import { frameFor, prepareInput, reencode, type InputVideo, type Layer } from './input-video.ts';
import { demoBadgeBox } from './demo-mark.ts';
import { canRenderText, displayText, escapeXml, FONT_FAMILY } from './text.ts';

/** A video edit keeps its source's size (made even) and length, at most two minutes of it. */
const MAX_EDIT_SECONDS = 120;

/**
 * Burns captions in, styled by the caption template. There is no speech recognition locally, so
 * the captions carry the job's script or prompt when it has one, else a line saying where the
 * captions would be; a corner tag names the caption language.
 */
export async function renderVideoEdit(job: EngineJob, dir: string, ctx: RenderContext): Promise<string> {
  const input = await prepareInput(job, dir, ctx);
  // A job made from a request has no size yet (local/job.ts): it is the source's, read from its copy.
  const frame = frameFor(job.width > 0 ? job : { ...job, ...sourceShape(input) }, input);
  const lang = typeof job.params.language === 'string' && job.params.language ? job.params.language : 'en';
  const text = displayText(job.script ?? '') || displayText(job.prompt) || `Captions in ${languageName(lang)} appear here`;
  const style = captionStyle(job.template, frame.width, frame.height);
  const cues = timeCues(splitPhrases(text, 5, 28), frame.duration);
  const layers: Layer[] = [];
  const track = await writeCaptionTrack(dir, cues, frame, style);
  if (track) layers.push({ track });
  if (await canRenderText()) {
    const tag = await languageTag(lang, frame.width, frame.height);
    await tag.png.toFile(path.join(dir, 'lang.png'));
    const mark = demoBadgeBox(frame.width, frame.height);
    // Under the demo mark, which takes the top-right corner.
    layers.push({ png: 'lang.png', x: `W-w-${tag.margin}`, y: Math.max(tag.margin, mark.y + mark.h + Math.round(tag.margin / 2)) });
  }
  return reencode(dir, input, frame, layers, ctx);
}

function sourceShape(input: InputVideo): Pick<EngineJob, 'width' | 'height' | 'durationSeconds'> {
  const even = (n: number) => (n % 2 === 0 ? n : n + 1);
  const { width, height, durationSeconds } = input.info;
  return { width: even(width ?? 720), height: even(height ?? 1280), durationSeconds: Math.min(Math.max(durationSeconds ?? 1, 1), MAX_EDIT_SECONDS) };
}

/** Reads what the template carries (font_size is in pixels of a 1080p frame); defaults fill the rest. */
export function captionStyle(template: Record<string, unknown> | undefined, W: number, H: number): CaptionStyle {
  const style = defaultCaptionStyle(W, H);
  if (!template) return style;
  const t = template;
  const pick = (...keys: string[]) => keys.map((k) => t[k]).find((v) => v !== undefined && v !== null);
  const size = Number(pick('font_size', 'fontSize', 'size'));
  if (Number.isFinite(size) && size > 0) {
    style.fontSize = Math.round(Math.min(H / 6, Math.max(10, (size * Math.min(W, H)) / 1080)));
  }
  style.color = parseHex(pick('color', 'font_color', 'text_color')) ?? style.color;
  style.stroke = parseHex(pick('stroke_color', 'outline_color')) ?? style.stroke;
  const box = pick('background_color', 'box_color', 'highlight_color');
  if (box === false || box === 'none' || box === 'transparent') style.box = null;
  else style.box = parseHex(box) ?? style.box;
  // Without a box, an outline keeps the text readable on any picture.
  if (!style.box && !style.stroke) style.stroke = '#000000';
  const upper = pick('uppercase', 'all_caps');
  if (typeof upper === 'boolean') style.uppercase = upper;
  const weight = pick('font_weight', 'bold');
  if (weight !== undefined) style.bold = weight === true || weight === 'bold' || Number(weight) >= 600;
  const position = pick('position', 'vertical_position');
  if (position === 'top' || position === 'bottom') style.position = position;
  if (position === 'center' || position === 'middle') style.position = 'center';
  return style;
}

async function languageTag(lang: string, W: number, H: number): Promise<{ png: Sharp; margin: number }> {
  const code = lang.replace(/[^A-Za-z-]/g, '').slice(0, 8).toUpperCase() || 'EN';
  const font = Math.max(10, Math.round(Math.min(W, H) * 0.035));
  const w = Math.round(code.length * font * 0.7 + font * 1.2);
  const h = Math.round(font * 1.6);
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}"><rect width="${w}" height="${h}" rx="${Math.round(h / 4)}" fill="#000000" fill-opacity="0.6"/><text x="${w / 2}" y="${Math.round(h / 2 + font * 0.36)}" text-anchor="middle" font-family="${FONT_FAMILY}" font-weight="bold" font-size="${font}" fill="#ffffff">${escapeXml(code)}</text></svg>`;
  return { png: sharp(Buffer.from(svg)).png(), margin: Math.round(Math.min(W, H) * 0.04) };
}
