import { parseAspectRatio } from '../../../domain/aspect-ratio.ts';
import { isImageOperation, type ImageResolution } from '../../../domain/generation-types.ts';
import { OPENAI_LIFECYCLE } from './openai-lifecycle.ts';

/*
 * Our requests in the OpenAI API's terms, as its OpenAPI document (openai/openai-openapi) and its
 * SDK (openai/openai-node src/resources/videos.ts, images.ts) describe them; the stored contracts
 * are test/contracts/openai/*.json, and test/unit/openai-limits.test.ts holds these tables to them.
 * - POST /videos, multipart {prompt, model, seconds "4" | "8" | "12", size 720x1280 | 1280x720 |
 *   1024x1792 | 1792x1024 (sora-2: the 720p two only), input_reference: an image of that size}.
 * - POST /images/generations {model, prompt, n 1-10, size, quality low | medium | high}, answered
 *   with b64_json; POST /images/edits, the same fields as multipart with the images as `image[]`
 *   files (png, jpeg or webp, under 50 MB, at most 16).
 */
export const OPENAI_VIDEO_MODELS = ['sora-2', 'sora-2-pro'] as const;
export const OPENAI_IMAGE_MODELS = ['gpt-2', 'gpt-2.5'] as const;

/**
 * Our image models to OpenAI's, chosen from its current list: the SDK's `ImageModel`
 * (openai-node 7b7d6ca, src/resources/images.ts) and the document's CreateImageRequest.model
 * (openai-openapi f85dbe2, 2026-08-21) name gpt-image-1, gpt-image-1-mini, gpt-image-1.5 and
 * gpt-image-2 (snapshot gpt-image-2-2026-04-21, the newest). OpenAI's deprecations page shut down
 * gpt-image-1 on 2026-10-23 and gpt-image-1.5, gpt-image-1-mini and chatgpt-image-latest on
 * 2026-12-01 (openai-lifecycle.ts), so gpt-image-2 is the one model of that list still served, and
 * both our tiers get it: gpt-2.5 keeps its own efforts and prices. OPENAI_IMAGE_MODELS overrides
 * either (OpenAI's successors, gpt-image-2.6-sunburst and -flare, are not in the stored contract yet).
 */
export const OPENAI_DEFAULT_IMAGE_MODELS: Readonly<Record<string, string>> = { 'gpt-2': 'gpt-image-2', 'gpt-2.5': 'gpt-image-2' };

/**
 * Sora on OpenAI: every method of the SDK's Videos is `@deprecated` with "The Sora API is
 * scheduled to permanently shut down on September 24, 2026" (openai-node src/resources/videos.ts,
 * since 4424b404 of 2026-08-13), and OpenAI's sora-2 model page says it did, with no replacement.
 * fal's Sora endpoints are gone too (fal-lifecycle.ts): no route is suggested.
 */
const SORA_SHUTDOWN = OPENAI_LIFECYCLE.entries.find((e) => e.id === 'sora-2')!.date;

/** Said with every video refusal: the code path stays for an account OpenAI still serves, but nobody should plan on it. */
export const videosRetiredNote = (): string => `OpenAI shut its Videos (Sora) API down on ${SORA_SHUTDOWN}`;

export const SORA_SECONDS = ['4', '8', '12'] as const;
export const SORA_SIZES: Readonly<Record<(typeof OPENAI_VIDEO_MODELS)[number], readonly string[]>> = {
  'sora-2': ['720x1280', '1280x720'],
  'sora-2-pro': ['720x1280', '1280x720', '1024x1792', '1792x1024'],
};

/** The three sizes every GPT image model makes (CreateImageRequest.size's description). */
export const STANDARD_IMAGE_SIZES = ['1024x1024', '1536x1024', '1024x1536'] as const;
/**
 * gpt-image-2's other sizes, by the same description: WIDTHxHEIGHT, both divisible by 16, the
 * ratio from 1:3 to 3:1, at most 3840x2160 (above 2560x1440 experimental).
 */
export const FREE_SIZE_RULES = { multipleOf: 16, maxRatio: 3, maxEdge: 3840, maxPixels: 3840 * 2160 } as const;

/** What each GPT image model makes: the standard sizes (1k) only, or free sizes too (2k as well). */
export const OPENAI_IMAGE_LIMITS: Readonly<Record<string, { resolutions: readonly ImageResolution[]; freeSizes: boolean }>> = {
  'gpt-image-1': { resolutions: ['1k'], freeSizes: false },
  'gpt-image-1-mini': { resolutions: ['1k'], freeSizes: false },
  'gpt-image-1.5': { resolutions: ['1k'], freeSizes: false },
  'chatgpt-image-latest': { resolutions: ['1k'], freeSizes: false },
  'gpt-image-2': { resolutions: ['1k', '2k'], freeSizes: true },
  'gpt-image-2-2026-04-21': { resolutions: ['1k', '2k'], freeSizes: true },
};
// A model an operator names that this table does not know is held to what every GPT image model makes.
export const imageLimitsOf = (openaiModel: string) => OPENAI_IMAGE_LIMITS[openaiModel] ?? { resolutions: ['1k'] as const, freeSizes: false };

// The long side of each resolution on a free-size model; 4k (4096) is past its 3840 edge.
const LONG_SIDE: Readonly<Record<string, number>> = { '2k': 2048 };

// A request with images (an edit, a product shot, a branded image) goes to /images/edits.

export function openaiRefusal(operation: string, params: Record<string, unknown>, imageModels: Readonly<Record<string, string>> = OPENAI_DEFAULT_IMAGE_MODELS): string | undefined {
  const model = String(params.model);
  if (operation === 'ai-video') {
    if (!(OPENAI_VIDEO_MODELS as readonly string[]).includes(model)) return `${model} (ai-video) is not served by the OpenAI engine: ${videosRetiredNote()}`;
    const seconds = String(params.duration);
    if (!(SORA_SECONDS as readonly string[]).includes(seconds)) return `duration: ${model} on OpenAI makes ${SORA_SECONDS.join(', ')} second videos, not ${seconds} (${videosRetiredNote()})`;
    if (!SORA_SIZES[model as keyof typeof SORA_SIZES].includes(soraSize(params))) return `hd: ${model} on OpenAI makes 720p only; ask sora-2-pro for hd (${videosRetiredNote()})`;
    return undefined;
  }
  if (isImageOperation(operation) && (OPENAI_IMAGE_MODELS as readonly string[]).includes(model)) {
    const limits = imageLimitsOf(imageModels[model] ?? OPENAI_DEFAULT_IMAGE_MODELS[model]!);
    const resolution = String(params.resolution ?? '1k');
    if (!(limits.resolutions as readonly string[]).includes(resolution)) {
      return limits.resolutions.length === 1 ? `resolution: ${model} on OpenAI makes 1k images only, not ${resolution}` : `resolution: ${model} on OpenAI makes ${limits.resolutions.join(' or ')} images, not ${resolution}`;
    }
    const ratio = parseAspectRatio(String(params.aspect_ratio));
    if (resolution !== '1k' && ratio && Math.max(ratio.width / ratio.height, ratio.height / ratio.width) > FREE_SIZE_RULES.maxRatio) {
      return `aspect_ratio: ${model} on OpenAI makes ${resolution} images from 1:3 to 3:1, not ${String(params.aspect_ratio)}`;
    }
    return undefined;
  }
  return `${model} (${operation}) is not served by the OpenAI engine of this version (it serves ${OPENAI_IMAGE_MODELS.join(', ')} images, and ${OPENAI_VIDEO_MODELS.join(', ')} videos for an account OpenAI still serves; ${videosRetiredNote()})`;
}

/** The Videos API size: the ratio's orientation, the larger frame for hd or 1080p (sora-2-pro). */
export function soraSize(params: Record<string, unknown>): string {
  const portrait = params.aspect_ratio === '9:16';
  const large = Boolean(params.hd) || params.resolution === '1080p';
  if (portrait) return large ? '1024x1792' : '720x1280';
  return large ? '1792x1024' : '1280x720';
}

/**
 * The Images API size: at 1k the standard size nearest the requested ratio (every GPT image
 * model makes it); at 2k on a free-size model the ratio itself, long side 2048, both sides
 * rounded to a multiple of 16.
 */
export function imageSize(aspectRatio: string, resolution: string = '1k', openaiModel: string = 'gpt-image-1.5'): string {
  const ratio = parseAspectRatio(aspectRatio);
  const long = LONG_SIDE[resolution];
  if (ratio && long && imageLimitsOf(openaiModel).freeSizes) {
    const m = FREE_SIZE_RULES.multipleOf;
    const short = Math.round((long * Math.min(ratio.width, ratio.height)) / Math.max(ratio.width, ratio.height) / m) * m;
    return ratio.width >= ratio.height ? `${long}x${short}` : `${short}x${long}`;
  }
  const r = ratio ? ratio.width / ratio.height : 1;
  return r > 1.2 ? '1536x1024' : r < 1 / 1.2 ? '1024x1536' : '1024x1024';
}

/** Our effort as the Images API's quality; `fast` asks for its quickest. */
export function imageQuality(params: Record<string, unknown>): string {
  if (params.fast) return 'low';
  const effort = String(params.effort ?? 'medium');
  return effort === 'low' || effort === 'medium' ? effort : 'high';
}

/**
 * The fields of an Images request (JSON for generations, text parts for edits). No
 * `input_fidelity`: the document allows it on gpt-image-1 and 1.5 "and later", refuses it on
 * gpt-image-1-mini, and clients report gpt-image-2 refusing it; its default (low) is what we want.
 */
export function imageFields(params: Record<string, unknown>, prompt: string, imageModels: Readonly<Record<string, string>>): { model: string; prompt: string; n: number; size: string; quality: string } {
  const model = imageModels[String(params.model)] ?? OPENAI_DEFAULT_IMAGE_MODELS[String(params.model)] ?? 'gpt-image-1.5';
  return { model, prompt, n: Number(params.quantity ?? 1), size: imageSize(String(params.aspect_ratio), String(params.resolution ?? '1k'), model), quality: imageQuality(params) };
}
