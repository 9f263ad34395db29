import { isImageOperation } from '../../../domain/generation-types.ts';
/*
 * Our requests in the Gemini API's terms, and what each Gemini model can make. Held to the stored
 * contracts test/contracts/gemini/predict-long-running.json and generate-content.json (a unit test
 * compares these tables with them), read from googleapis/js-genai src/converters/_models_converters.ts
 * and https://ai.google.dev/gemini-api/docs/video:
 * - Veo: POST models/{model}:predictLongRunning with instances[0] {prompt, image, lastFrame,
 *   referenceImages[{image, referenceType}]} (an image is {bytesBase64Encoded, mimeType}) and
 *   parameters {aspectRatio, durationSeconds, resolution, sampleCount}; generateAudio is not a
 *   field on the Gemini API (Veo 3.1 makes sound always).
 * - Images: generateContent with contents[0].parts [{text}, {inlineData {mimeType, data}}...] and
 *   generationConfig {responseModalities ["IMAGE"], imageConfig {aspectRatio, imageSize}}.
 */
export const GEMINI_VIDEO_MODELS: Readonly<Record<string, string>> = {
  'veo-3.1': 'veo-3.1-generate-preview',
  'veo-3.1-fast': 'veo-3.1-fast-generate-preview',
};

/**
 * Google's deprecations page: gemini-3-pro-image-preview and gemini-3.1-flash-image-preview shut
 * down on 2026-06-25 (replaced by the GA gemini-3-pro-image and gemini-3.1-flash-image, released
 * 2026-05-28), and gemini-2.5-flash-image's shutdown date is 2026-10-02. `fast` is the Flash image
 * model, `pro` the Pro one.
 */
export const GEMINI_DEFAULT_IMAGE_MODELS: Readonly<Record<string, string>> = { fast: 'gemini-3.1-flash-image', pro: 'gemini-3-pro-image' };

// ---- Veo ----------------------------------------------------------------------------------------------------------

export const VEO_RATIOS: readonly string[] = ['16:9', '9:16'];
export const VEO_DURATIONS: readonly number[] = [4, 6, 8];
/** Each Veo model's resolutions (Lite has no 4k). */
export const VEO_RESOLUTIONS: Readonly<Record<string, readonly string[]>> = {
  'veo-3.1-generate-preview': ['720p', '1080p', '4k'],
  'veo-3.1-fast-generate-preview': ['720p', '1080p', '4k'],
  'veo-3.1-lite-generate-preview': ['720p', '1080p'],
};
/** "1080p (only supports 8s duration), 4k (only supports 8s duration)". */
export const VEO_EIGHT_SECONDS_RESOLUTIONS: readonly string[] = ['1080p', '4k'];
/** referenceImages: "Veo 3.1 only"; with them the video is 8 seconds and has no frame images. */
export const VEO_REFERENCE_MODELS: readonly string[] = ['veo-3.1-generate-preview'];
export const VEO_MAX_REFERENCES = 3;

// ---- Images -------------------------------------------------------------------------------------------------------

// Images, edits and product shots are one generateContent call with the references inline.
const RATIOS_10 = ['1:1', '2:3', '3:2', '3:4', '4:3', '4:5', '5:4', '9:16', '16:9', '21:9'];
const RATIOS_14 = [...RATIOS_10, '1:4', '4:1', '1:8', '8:1'];

export interface ImageModelLimits {
  ratios: readonly string[];
  /** Gemini's imageSize values the model takes, or null for a model that takes no imageSize (1K only). */
  sizes: readonly string[] | null;
}

/** What each Gemini image model makes, by its Gemini name. */
export const GEMINI_IMAGE_LIMITS: Readonly<Record<string, ImageModelLimits>> = {
  'gemini-3-pro-image': { ratios: RATIOS_10, sizes: ['1K', '2K', '4K'] },
  'gemini-3.1-flash-image': { ratios: RATIOS_14, sizes: ['512', '1K', '2K', '4K'] },
  // An operator's GEMINI_IMAGE_MODELS may still name it; it makes 1024px images only.
  'gemini-2.5-flash-image': { ratios: RATIOS_10, sizes: null },
};
/** A model this table does not know (an operator's override): only the call's own enums hold. */
export const ANY_IMAGE_MODEL: ImageModelLimits = { ratios: RATIOS_14, sizes: ['512', '1K', '2K', '4K'] };

export const imageLimitsOf = (geminiModel: string): ImageModelLimits => GEMINI_IMAGE_LIMITS[geminiModel] ?? ANY_IMAGE_MODEL;

/** Our resolution (`1k`) as Gemini's imageSize (`1K`). */
export const imageSizeOf = (resolution: unknown): string => String(resolution ?? '1k').toUpperCase();

/** Our resolutions a model makes, in our names, for messages. */
const ourSizes = (sizes: readonly string[] | null): string[] => (sizes ?? ['1K']).filter((s) => /^\dK$/.test(s)).map((s) => s.toLowerCase());

const orList = (xs: readonly string[]): string => (xs.length < 2 ? xs.join('') : `${xs.slice(0, -1).join(', ')} or ${xs.at(-1)}`);

function veoRefusal(model: string, params: Record<string, unknown>): string | undefined {
  const gemini = GEMINI_VIDEO_MODELS[model]!;
  const ratio = String(params.aspect_ratio);
  const resolution = String(params.resolution);
  const duration = Number(params.duration);
  const resolutions = VEO_RESOLUTIONS[gemini] ?? [];
  if (!VEO_RATIOS.includes(ratio)) return `aspect_ratio: ${model} on Gemini makes ${orList(VEO_RATIOS)} videos, not ${ratio}`;
  if (!resolutions.includes(resolution)) return `resolution: ${model} on Gemini makes ${orList(resolutions)} videos, not ${resolution}`;
  if (!VEO_DURATIONS.includes(duration)) return `duration: ${model} on Gemini makes ${orList(VEO_DURATIONS.map(String))} second videos, not ${duration}`;
  if (VEO_EIGHT_SECONDS_RESOLUTIONS.includes(resolution) && duration !== 8) return `duration: ${model} on Gemini makes ${resolution} videos of 8 seconds only, not ${duration}`;
  if (params.reference_image_url) {
    if (!VEO_REFERENCE_MODELS.includes(gemini)) return `reference_image_url: ${model} on Gemini takes no reference image`;
    if (params.first_frame_image_url || params.last_frame_image_url) return `reference_image_url: ${model} on Gemini takes a reference image or frame images, not both`;
    if (duration !== 8) return `duration: ${model} on Gemini makes videos with a reference image of 8 seconds only, not ${duration}`;
  }
  return undefined;
}

function imageRefusal(model: string, params: Record<string, unknown>, geminiModel: string): string | undefined {
  const limits = imageLimitsOf(geminiModel);
  const ratio = String(params.aspect_ratio);
  if (!limits.ratios.includes(ratio)) return `aspect_ratio: ${model} on Gemini makes ${limits.ratios.join(', ')} images, not ${ratio}`;
  const sizes = ourSizes(limits.sizes);
  const resolution = String(params.resolution ?? '1k');
  if (!sizes.includes(resolution)) return sizes.length === 1 ? `resolution: ${model} on Gemini makes ${sizes[0]} images only, not ${resolution}` : `resolution: ${model} on Gemini makes ${orList(sizes)} images, not ${resolution}`;
  return undefined;
}

/**
 * Why the Gemini route cannot make this request (a 400 at create), by the contract's limits.
 * `imageModels` is our image model -> Gemini model (the defaults with GEMINI_IMAGE_MODELS over them).
 */
export function geminiRefusal(operation: string, params: Record<string, unknown>, imageModels: Readonly<Record<string, string>> = GEMINI_DEFAULT_IMAGE_MODELS): string | undefined {
  const model = String(params.model);
  if (operation === 'ai-video' && GEMINI_VIDEO_MODELS[model]) return veoRefusal(model, params);
  if (isImageOperation(operation) && GEMINI_DEFAULT_IMAGE_MODELS[model]) return imageRefusal(model, params, imageModels[model] ?? GEMINI_DEFAULT_IMAGE_MODELS[model]);
  return `${model} (${operation}) is not served by the Gemini engine of this version (it serves ${Object.keys(GEMINI_VIDEO_MODELS).join(', ')} videos and ${Object.keys(GEMINI_DEFAULT_IMAGE_MODELS).join(', ')} images)`;
}
