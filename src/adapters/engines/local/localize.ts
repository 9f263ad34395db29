import type { EngineJob } from '../render-job.ts';
import { defaultCaptionStyle, writeCaptionTrack } from './captions.ts';
import type { RenderContext } from './render-context.ts';
import { frameFor, prepareInput, reencode, type Layer } from './input-video.ts';

// One semitone up, then the tempo put back: audibly "another voice", same timing. There is no
// translation or dubbing locally; the banner says which language the real engine would produce.
const SEMITONE = 1.059463;
const PITCH_UP = `asetrate=${Math.round(48000 * SEMITONE)},aresample=48000,atempo=${(1 / SEMITONE).toFixed(6)}`;

export async function renderLocalize(job: EngineJob, dir: string, ctx: RenderContext): Promise<string> {
  const input = await prepareInput(job, dir, ctx);
  const frame = frameFor(job, input, job.params.enable_dynamic_duration === true);
  const code = typeof job.params.output_language === 'string' ? job.params.output_language : '';
  const style = { ...defaultCaptionStyle(frame.width, frame.height), position: 'top' as const, box: '#1d3557', boxOpacity: 0.8 };
  const banner = `Dubbed · ${languageName(code)}`;
  const track = await writeCaptionTrack(dir, [{ text: banner, start: 0, end: frame.duration }], frame, style);
  const layers: Layer[] = track ? [{ track }] : [];
  return reencode(dir, input, frame, layers, ctx, PITCH_UP);
}

/** "es" -> "Spanish (ES)"; an unknown code is shown as given. */
export function languageName(code: string): string {
  const clean = code.replace(/[^A-Za-z-]/g, '').slice(0, 20);
  if (!clean) return 'another language';
  try {
    const name = new Intl.DisplayNames(['en'], { type: 'language', fallback: 'none' }).of(clean);
    return name ? `${name} (${clean.toUpperCase()})` : clean.toUpperCase();
  } catch {
    return clean.toUpperCase();
  }
}
