import { EngineError, type EngineJob } from '../render-job.ts';
import { inputArgs, openWith, probeMedia, writeMediaStream, type MediaFile, type MediaInfo } from '../ffmpeg.ts';
import type { CaptionTrack } from './captions.ts';
import type { Frame, RenderContext } from './render-context.ts';
import { writeDemoBadge } from './demo-mark.ts';
import { encode, evenSize, FPS, mp4Output } from './encode.ts';

export interface InputVideo {
  file: MediaFile;
  info: MediaInfo;
}

/**
 * Streams the job's source video into `dir` (never whole in memory) and reads its shape from that
 * file; unreadable input fails for good, and so does a container we do not take (refused from its
 * first bytes, before ffmpeg or ffprobe sees it).
 */
export async function prepareInput(job: EngineJob, dir: string, ctx: RenderContext): Promise<InputVideo> {
  if (!job.inputVideo) throw new EngineError('no input video was given', { transient: false });
  const { stream } = await job.inputVideo.open(ctx.signal);
  const file = await writeMediaStream(dir, 'input-video', stream, 'video', ctx.signal);
  const info = await probeMedia(file, { signal: ctx.signal }).catch((err: unknown) => {
    if (ctx.signal.aborted) throw err;
    return null;
  });
  if (!info?.videoCodec || !info.width || !info.height) {
    throw new EngineError('the input video could not be read', { transient: false });
  }
  return { file, info };
}

/** The requested length, else the input's own. */
export function frameFor(job: EngineJob, input: InputVideo, useInputLength = false): Frame {
  const requested = job.durationSeconds;
  const own = input.info.durationSeconds ?? undefined;
  const duration = useInputLength ? (own ?? requested) : (requested ?? own);
  if (!duration || duration <= 0) throw new EngineError('the input video has no readable length', { transient: false });
  return { width: evenSize(job.width), height: evenSize(job.height), duration };
}

/** A still picture (PNG path) or a caption track laid over the video. */
export type Layer = { png: string; x: number | string; y: number | string } | { track: CaptionTrack };

/**
 * Re-encodes the input at the frame's size (scaled to cover, centre-cropped), looped when it is
 * shorter than asked and cut when longer, with `layers` on top and the demo mark over them. Its audio is kept (through
 * `audioFilter` when given) and padded with silence to the end; a silent input stays silent.
 */
export async function reencode(
  dir: string,
  input: InputVideo,
  frame: Frame,
  given: Layer[],
  ctx: RenderContext,
  audioFilter = '',
): Promise<string> {
  const { width: W, height: H } = frame;
  // On top of everything: this video is a demo render, not AI.
  const layers: Layer[] = [...given, await writeDemoBadge(dir, W, H)];
  const args = inputArgs(input.file, ['-stream_loop', '-1']);
  const graph = [`[0:v]scale=${W}:${H}:force_original_aspect_ratio=increase,crop=${W}:${H},setsar=1,fps=${FPS}[l0]`];
  for (const [i, layer] of layers.entries()) {
    if ('track' in layer) args.push(...openWith('concat'), '-safe', '0', '-i', layer.track.listPath);
    else args.push(...openWith('image2'), '-i', layer.png);
    const [x, y] = 'track' in layer ? [layer.track.x, layer.track.y] : [layer.x, layer.y];
    graph.push(`[l${i}][${i + 1}:v]overlay=${x}:${y}[l${i + 1}]`);
  }
  graph.push(`[l${layers.length}]format=yuv420p[v]`);
  const hasAudio = input.info.audioCodec !== null;
  if (hasAudio) graph.push(`[0:a]aresample=48000${audioFilter ? `,${audioFilter}` : ''},apad[a]`);
  return encode(dir, [...args, '-filter_complex', graph.join(';'), ...mp4Output(frame.duration, hasAudio)], ctx);
}
