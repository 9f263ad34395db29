import fs from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';
import { portraitSvg } from '../../media/portrait.ts';
import { EngineError, type EngineJob } from '../render-job.ts';
import { inputArgs, openWith, probeMedia, writeMediaStream, type MediaFile } from '../ffmpeg.ts';
import { defaultCaptionStyle, splitPhrases, timeCues, writeCaptionTrack } from './captions.ts';
import type { LocalVoice, RenderContext } from './render-context.ts';
import { withDemoBadge } from './demo-mark.ts';
import { encode, evenSize, fitOnBlur, FPS, mp4Output, writeImage } from './encode.ts';
import { displayText } from './text.ts';

/** A voiceover longer than this is cut: the video would be unreasonably large for a stand-in. */
const MAX_VOICE_SECONDS = 600;
/** The voice of a talking avatar whose job names none (generations made before the catalogue). */
const DEFAULT_VOICE: LocalVoice = { language: 'en-us' };

/**
 * The avatar still with the script captioned phrase by phrase over its voice: the voiceover's audio
 * when one is given, else the script spoken (eSpeak NG, handed in as `speak`) with the job's catalogue voice. The video
 * lasts as long as the voice. No lip movement: the face is still.
 */
export async function renderTalkingAvatar(job: EngineJob, dir: string, ctx: RenderContext): Promise<string> {
  const W = evenSize(job.width);
  const H = evenSize(job.height);
  const script = displayText(job.script ?? '');
  let voice: MediaFile;
  if (job.voiceAudio) {
    const { stream } = await job.voiceAudio.open(ctx.signal);
    voice = await writeMediaStream(dir, 'voice-input', stream, 'audio', ctx.signal);
  } else {
    if (!script) throw new EngineError('a talking avatar needs a script or a voiceover', { transient: false });
    if (!ctx.speak) throw new EngineError('this local engine has no speech synthesizer: a talking avatar needs a voiceover', { transient: false });
    const speech = await ctx.speak({ text: job.script ?? script, voice: job.voice ?? DEFAULT_VOICE, signal: ctx.signal, tmpRoot: dir });
    voice = { path: path.join(dir, 'voice.mp3'), demuxer: 'mp3' };
    await fs.writeFile(voice.path, speech.bytes);
  }
  const duration = Math.min(MAX_VOICE_SECONDS, await audioSeconds(voice, ctx));
  const cues = timeCues(splitPhrases(script), duration);

  const face = job.avatar?.bytes ?? (await placeholderFace());
  const framePath = await writeImage(dir, 'frame.png', await fitOnBlur(face, W, H));
  // The still carries the demo mark: this video is a demo render, not AI.
  await fs.writeFile(framePath, await withDemoBadge(await fs.readFile(framePath)));
  const captions = await writeCaptionTrack(dir, cues, { width: W, height: H, duration }, defaultCaptionStyle(W, H));

  // One decoded frame, repeated by the loop filter: far cheaper than re-reading the PNG per frame.
  const inputs = [...openWith('image2'), '-i', 'frame.png'];
  let graph = `[0:v]format=yuv420p,loop=loop=-1:size=1,settb=1/${FPS},setpts=N,setsar=1[still];`;
  let video = '[still]';
  if (captions) {
    inputs.push(...openWith('concat'), '-safe', '0', '-i', captions.listPath);
    graph += `[still][1:v]overlay=${captions.x}:${captions.y}[cap];`;
    video = '[cap]';
  }
  inputs.push(...inputArgs(voice));
  graph += `${video}format=yuv420p[v];[${captions ? 2 : 1}:a]aresample=48000,apad[a]`;
  return encode(dir, [...inputs, '-filter_complex', graph, ...mp4Output(duration, true)], ctx);
}

async function audioSeconds(file: MediaFile, ctx: RenderContext): Promise<number> {
  const info = await probeMedia(file, { signal: ctx.signal }).catch((err: unknown) => {
    if (ctx.signal.aborted) throw err;
    return null;
  });
  if (!info?.audioCodec || !info.durationSeconds || info.durationSeconds <= 0) {
    throw new EngineError('the voiceover audio could not be read', { transient: false });
  }
  return info.durationSeconds;
}

function placeholderFace(): Promise<Buffer> {
  const look = { skin: '#e0ac69', hair: '#2b1d0e', outfit: '#3d405b', backdrop: '#e9f5db', longHair: false };
  return sharp(Buffer.from(portraitSvg(look, 1024))).png().toBuffer();
}
