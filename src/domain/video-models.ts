import { ANY_RATIO, parseAspectRatio } from './aspect-ratio.ts';
import type { VideoModel } from './generation-types.ts';
import { orList } from './generation-fields.ts';

export const VIDEO_RESOLUTIONS = ['480p', '720p', '1080p', '4k'] as const;
export type VideoResolution = (typeof VIDEO_RESOLUTIONS)[number];

export const KLING_QUALITIES = ['standard', 'pro', '4k'] as const;
export type KlingQuality = (typeof KLING_QUALITIES)[number];

export type DurationRule =
  | { readonly kind: 'list'; readonly values: readonly number[] }
  | { readonly kind: 'range'; readonly min: number; readonly max: number };

export type VideoModelSpec = {
  /** 'any' = any W:H of whole numbers 1-100; 'auto' is accepted only where listed. */
  readonly aspectRatios: 'any' | readonly string[];
  readonly durations: DurationRule;
  readonly resolutions: readonly VideoResolution[];
  readonly defaultResolution: VideoResolution;
  readonly hd: boolean;
  readonly takesQuality: boolean;
  readonly takesFrames: boolean;
  readonly requiresFirstFrame: boolean;
  readonly maxReferenceImages: number;
  readonly usesBrandAndProducts: boolean;
  readonly defaultGenerateAudio: boolean;
};

const SEEDANCE_RATIOS = ['auto', '21:9', '16:9', '4:3', '1:1', '3:4', '9:16'] as const;
const SEEDANCE_DURATIONS: DurationRule = { kind: 'range', min: 4, max: 15 };

const base = {
  hd: false,
  takesQuality: false,
  takesFrames: false,
  requiresFirstFrame: false,
  maxReferenceImages: 0,
  usesBrandAndProducts: false,
  defaultGenerateAudio: false,
} as const;

const sora = {
  ...base,
  aspectRatios: ['16:9', '9:16'],
  durations: { kind: 'list', values: [4, 8, 12, 16, 20] },
  hd: true,
} as const;

const veo = {
  ...base,
  aspectRatios: 'any',
  durations: { kind: 'list', values: [4, 6, 8] },
  resolutions: ['720p', '1080p', '4k'],
  defaultResolution: '720p',
  takesFrames: true,
} as const;

// Seedance and kling-o3 reference-image limits: the spec fixes kling-o3 at 4; seedance's 4 is ours.
const seedance = {
  ...base,
  aspectRatios: SEEDANCE_RATIOS,
  durations: SEEDANCE_DURATIONS,
  resolutions: ['480p', '720p', '1080p'],
  defaultResolution: '720p',
  maxReferenceImages: 4,
  usesBrandAndProducts: true,
} as const;

// The spec forbids 1080p on the -fast seedance variants.
const seedanceFast = { ...seedance, resolutions: ['480p', '720p'] } as const;

export const VIDEO_MODEL_TABLE: Readonly<Record<VideoModel, VideoModelSpec>> = {
  'sora-2': { ...sora, resolutions: ['720p'], defaultResolution: '720p' },
  'sora-2-pro': { ...sora, resolutions: ['720p', '1080p'], defaultResolution: '720p' },
  'veo-3.1': veo,
  'veo-3.1-fast': veo,
  'kling-2.6': {
    ...base,
    aspectRatios: 'any',
    durations: { kind: 'list', values: [5, 10] },
    resolutions: ['720p', '1080p'],
    defaultResolution: '720p',
  },
  'kling-o3': {
    ...base,
    aspectRatios: ['16:9', '9:16', '1:1'],
    durations: { kind: 'range', min: 3, max: 15 },
    resolutions: ['720p', '1080p'],
    defaultResolution: '720p',
    takesQuality: true,
    takesFrames: true,
    maxReferenceImages: 4,
    usesBrandAndProducts: true,
    defaultGenerateAudio: true,
  },
  'seedance-2.0': seedance,
  'seedance-2.0-fast': seedanceFast,
  'seedance-2.0-frames': { ...seedance, takesFrames: true, requiresFirstFrame: true },
  'seedance-2.0-frames-fast': { ...seedanceFast, takesFrames: true, requiresFirstFrame: true },
};

export const videoModel = (model: VideoModel): VideoModelSpec => VIDEO_MODEL_TABLE[model];

export function allowsAspectRatio(model: VideoModel, ratio: string): boolean {
  const allowed = VIDEO_MODEL_TABLE[model].aspectRatios;
  return allowed === 'any' ? parseAspectRatio(ratio) !== null : allowed.includes(ratio);
}

export function allowsDuration(model: VideoModel, seconds: number): boolean {
  const rule = VIDEO_MODEL_TABLE[model].durations;
  if (rule.kind === 'list') return rule.values.includes(seconds);
  return Number.isInteger(seconds) && seconds >= rule.min && seconds <= rule.max;
}

export function allowsResolution(model: VideoModel, resolution: string): resolution is VideoResolution {
  return (VIDEO_MODEL_TABLE[model].resolutions as readonly string[]).includes(resolution);
}

/** For messages: "16:9, 9:16 or 1:1". */
export function describeAspectRatios(model: VideoModel): string {
  const allowed = VIDEO_MODEL_TABLE[model].aspectRatios;
  return allowed === 'any' ? ANY_RATIO : orList(allowed);
}

/** For messages: "4, 8, 12, 16 or 20 seconds" or "a whole number of seconds from 3 to 15". */
export function describeDurations(model: VideoModel): string {
  const rule = VIDEO_MODEL_TABLE[model].durations;
  return rule.kind === 'list'
    ? `${orList(rule.values)} seconds`
    : `a whole number of seconds from ${rule.min} to ${rule.max}`;
}

export const SHORT_SIDE: Readonly<Record<VideoResolution, number>> = {
  '480p': 480,
  '720p': 720,
  '1080p': 1080,
  '4k': 2160,
};

/**
 * Output frame size: the short side is the resolution's height; the long side follows the ratio,
 * rounded to an even number because H.264 with 4:2:0 chroma needs even dimensions. 'auto' is 16:9.
 */
export function frameSize(aspectRatio: string, resolution: VideoResolution): { width: number; height: number } {
  const ratio = aspectRatio === 'auto' ? { width: 16, height: 9 } : parseAspectRatio(aspectRatio);
  if (!ratio) throw new RangeError(`not an aspect ratio: ${JSON.stringify(aspectRatio)}`);
  const short = SHORT_SIDE[resolution];
  const long = Math.round((short * Math.max(ratio.width, ratio.height)) / Math.min(ratio.width, ratio.height) / 2) * 2;
  return ratio.width >= ratio.height ? { width: long, height: short } : { width: short, height: long };
}
