import type {
  ImageEffort,
  ImageModel,
  ImageResolution,
  VideoModel,
} from './generation-types.ts';
import type { KlingQuality, VideoResolution } from './video-models.ts';

// ---- Prices fixed by the spec ----------------------------------------------------------------------------------------

export const TALKING_AVATAR_PRICING = { creditsPerBlock: 20, blockCharacters: 250, min: 20, max: 160 } as const;
export const SWAP_AVATAR_CREDITS_PER_SECOND = { standard: 1, pro: 2 } as const;
export const VIDEO_EDIT_CREDITS = 2;
export const TEXT_TO_SPEECH_CREDITS = 1;
export const AD_LIBRARY_SCRAPE_CREDITS = 10;
export const SPEECH_TO_SPEECH_MAX_SECONDS = 120;

/** Credits per image; fast and pro have no effort. */
export const IMAGE_CREDITS_PER_IMAGE = {
  fast: { '1k': 1, '2k': 2, '4k': 2 },
  pro: { '1k': 2, '2k': 2, '4k': 4 },
  'gpt-2': {
    low: { '1k': 1, '2k': 1, '4k': 1 },
    medium: { '1k': 2, '2k': 2, '4k': 2 },
    high: { '1k': 4, '2k': 5, '4k': 7 },
  },
  'gpt-2.5': {
    low: { '1k': 1, '2k': 1, '4k': 1 },
    medium: { '1k': 1, '2k': 1, '4k': 1 },
    high: { '1k': 1, '2k': 2, '4k': 3 },
    xhigh: { '1k': 2, '2k': 3, '4k': 4 },
    max: { '1k': 3, '2k': 6, '4k': 10 },
  },
} as const;

export const DEFAULT_IMAGE_EFFORT = 'medium' satisfies ImageEffort;

// ---- Prices the spec leaves open (ours; listed in docs/api-notes.md, Prices) ------------------------------------------------------

/** total = ceil(creditsPerSecond × seconds × every multiplier that applies), at least 1. */
export const AI_VIDEO_PRICING = {
  creditsPerSecond: {
    'sora-2': 4,
    'sora-2-pro': 10,
    'veo-3.1': 8,
    'veo-3.1-fast': 4,
    'kling-2.6': 3,
    'kling-o3': 5,
    'seedance-2.0': 3,
    'seedance-2.0-fast': 2,
    'seedance-2.0-frames': 3,
    'seedance-2.0-frames-fast': 2,
  } satisfies Record<VideoModel, number>,
  multipliers: {
    soraHd: 1.5,
    klingQuality: { standard: 0.8, pro: 1, '4k': 2 } satisfies Record<KlingQuality, number>,
    resolution: { '480p': 0.75, '720p': 1, '1080p': 1.5, '4k': 2 } satisfies Record<VideoResolution, number>,
  },
} as const;

/** Per started second of the source video. */
export const LOCALIZE_CREDITS_PER_SECOND = { speed: 1, precision: 2 } as const;

// ---- Calculators ---------------------------------------------------------------------------------------------------

function assertSeconds(seconds: number): void {
  if (!Number.isFinite(seconds) || seconds < 0) throw new RangeError(`not a duration: ${seconds}`);
}

/** Characters are Unicode code points, the same count the script's length limit uses. */
export const scriptLength = (script: string): number => [...script].length;

/** 20 per started block of 250 characters: 250 → 20, 251 → 40; never below 20 (also for 0) nor above 160. */
export function talkingAvatarCredits(scriptLength: number): number {
  if (!Number.isInteger(scriptLength) || scriptLength < 0) throw new RangeError(`not a length: ${scriptLength}`);
  const p = TALKING_AVATAR_PRICING;
  const credits = Math.ceil(scriptLength / p.blockCharacters) * p.creditsPerBlock;
  return Math.min(p.max, Math.max(p.min, credits));
}

/**
 * Ours: a talking avatar voiced by a speech-to-speech voiceover has no script to count, so each
 * started 15 s of its audio counts as a 250-character block (about how long 250 characters take
 * to say): 20 credits per started 15 s, within the same 20-160.
 */
export const SECONDS_PER_SCRIPT_BLOCK = 15;
export function talkingAvatarCreditsForAudio(seconds: number): number {
  assertSeconds(seconds);
  return talkingAvatarCredits(Math.ceil(seconds / SECONDS_PER_SCRIPT_BLOCK) * TALKING_AVATAR_PRICING.blockCharacters);
}

/** A fractional duration is charged by the started second (rounded up): 1.2 s in pro mode costs 4. */
export function swapAvatarCredits(mode: keyof typeof SWAP_AVATAR_CREDITS_PER_SECOND, seconds: number): number {
  assertSeconds(seconds);
  return Math.ceil(seconds) * SWAP_AVATAR_CREDITS_PER_SECOND[mode];
}

export function localizeCredits(mode: keyof typeof LOCALIZE_CREDITS_PER_SECOND, seconds: number): number {
  assertSeconds(seconds);
  return Math.ceil(seconds) * LOCALIZE_CREDITS_PER_SECOND[mode];
}

/**
 * Brackets by whole seconds, rounded down: 29.9 s costs 1, 30 s costs 2. Audio longer than 120 s
 * has no price in the spec: null, so the caller refuses it with a message that fits where the
 * duration came from (the request or a probe of the file).
 */
export function speechToSpeechCredits(seconds: number): number | null {
  assertSeconds(seconds);
  if (seconds > SPEECH_TO_SPEECH_MAX_SECONDS) return null;
  return Math.min(4, Math.floor(Math.floor(seconds) / 30) + 1);
}

/** Effort is ignored for fast and pro; GPT models default to medium. A GPT effort the model lacks throws. */
export function imageCreditsPerImage(
  model: ImageModel,
  effort: ImageEffort | undefined,
  resolution: ImageResolution,
): number {
  if (model === 'fast' || model === 'pro') return IMAGE_CREDITS_PER_IMAGE[model][resolution];
  const byEffort: Partial<Record<ImageEffort, Record<ImageResolution, number>>> = IMAGE_CREDITS_PER_IMAGE[model];
  const row = byEffort[effort ?? DEFAULT_IMAGE_EFFORT];
  if (!row) throw new RangeError(`${model} has no effort ${effort}`);
  return row[resolution];
}

export type ImagePriceParams = {
  model: ImageModel;
  effort?: ImageEffort | undefined;
  resolution: ImageResolution;
  quantity: number;
};

export function imageCredits(p: ImagePriceParams): number {
  if (!Number.isInteger(p.quantity) || p.quantity < 1) throw new RangeError(`not a quantity: ${p.quantity}`);
  return imageCreditsPerImage(p.model, p.effort, p.resolution) * p.quantity;
}

export type AiVideoPriceParams = {
  model: VideoModel;
  duration: number;
  resolution: VideoResolution;
  quality?: KlingQuality | undefined;
  hd?: boolean | undefined;
};

// Multipliers as whole percents keep the arithmetic exact: 15 × 0.8 is not 12 in floating point.
const percent = (m: number): number => Math.round(m * 100);

export function aiVideoCredits(p: AiVideoPriceParams): number {
  assertSeconds(p.duration);
  const m = AI_VIDEO_PRICING.multipliers;
  const factors = [percent(m.resolution[p.resolution])];
  if (p.hd && (p.model === 'sora-2' || p.model === 'sora-2-pro')) factors.push(percent(m.soraHd));
  if (p.model === 'kling-o3') factors.push(percent(m.klingQuality[p.quality ?? 'pro']));
  const numerator = factors.reduce(
    (acc, f) => acc * f,
    AI_VIDEO_PRICING.creditsPerSecond[p.model] * Math.ceil(p.duration),
  );
  return Math.max(1, Math.ceil(numerator / 100 ** factors.length));
}

// ---- Price text ----------------------------------------------------------------------------------------------------
// The "Credit cost: ..." sentence of an endpoint's description, written from the same constants the
// calculators use, so the documented price cannot drift from the charged one.

const credits = (n: number): string => `${n} ${n === 1 ? 'credit' : 'credits'}`;

export const talkingAvatarPriceText = (p: Readonly<Record<keyof typeof TALKING_AVATAR_PRICING, number>> = TALKING_AVATAR_PRICING): string =>
  `Credit cost: ${credits(p.creditsPerBlock)} per ${p.blockCharacters} characters of script, minimum ${p.min}, maximum ${p.max}.`;

export const swapAvatarPriceText = (perSecond: Readonly<Record<keyof typeof SWAP_AVATAR_CREDITS_PER_SECOND, number>> = SWAP_AVATAR_CREDITS_PER_SECOND): string =>
  `Credit cost: ${credits(perSecond.standard)} per second in \`standard\` mode, ${perSecond.pro} per second in \`pro\` mode.`;

export const flatPriceText = (n: number): string => `Credit cost: ${credits(n)}.`;
