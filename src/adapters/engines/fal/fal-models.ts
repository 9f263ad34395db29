/*
 * The models fal serves for us and their inputs. Each endpoint's schema is stored in
 * test/contracts/fal/<endpoint id with / as -->.json (read from fal-js's generated endpoint types and
 * the endpoint's llms.txt page); the fake and test/unit/fal-contracts.test.ts hold this file to them.
 * - Veo 3.1: https://fal.ai/models/fal-ai/veo3.1/api (text to video: prompt, aspect_ratio 16:9 |
 *   9:16, duration "4s" | "6s" | "8s", resolution 720p | 1080p | 4k, generate_audio),
 *   .../veo3.1/image-to-video/api (image_url), .../veo3.1/first-last-frame-to-video/api
 *   (first_frame_url, last_frame_url), and the same three under fal-ai/veo3.1/fast.
 * - Sora 2: https://fal.ai/docs/model-api-reference/video-generation-api/sora-2-text-to-video
 *   (prompt, resolution 720p, aspect_ratio 16:9 | 9:16, duration 4 | 8 | 12 | 16 | 20), its /pro
 *   variant (resolution 720p | 1080p) and image-to-video (image_url).
 * - Kling 2.6 Pro: https://fal.ai/models/fal-ai/kling-video/v2.6/pro/text-to-video/llms.txt (prompt,
 *   duration "5" | "10", aspect_ratio 16:9 | 9:16 | 1:1, generate_audio; no resolution) and its
 *   image-to-video (start_image_url; no aspect_ratio: the picture sets the frame).
 * - Kling O3: https://fal.ai/models/fal-ai/kling-video/o3/pro/text-to-video/llms.txt (prompt,
 *   duration "3".."15", aspect_ratio 16:9 | 9:16 | 1:1, generate_audio), fal's
 *   kling-video-o3-standard-image-to-video reference (image_url, end_image_url; no aspect ratio:
 *   the frame decides) and kling-video-o3-pro-reference-to-video (start_image_url, end_image_url,
 *   image_urls as @Image1.., duration, aspect_ratio, generate_audio), each under
 *   fal-ai/kling-video/o3/{standard|pro|4k}.
 * - Seedance 2.0: fal's bytedance-seedance-2.0-text-to-video and -reference-to-video references
 *   (prompt, image_urls up to 9 as @Image1.., resolution 480p | 720p | 1080p, duration "auto" |
 *   "4".."15", aspect_ratio auto | 21:9 | 16:9 | 4:3 | 1:1 | 3:4 | 9:16, generate_audio) and
 *   bytedance-seedance-2.0-image-to-video (image_url, end_image_url); the same under
 *   bytedance/seedance-2.0/fast (no 1080p).
 * Every result carries {video: {url}} (Seedance's also a seed, Sora's a video_id).
 */
import { VIDEO_MODELS } from '../../../domain/generation-types.ts';

/** fal serves every ai-video model of the spec. */
export const FAL_MODELS = VIDEO_MODELS;
export type FalModel = (typeof FAL_MODELS)[number];

/** Which endpoint of a model's family the request needs. */
type InputKind = 'text' | 'image' | 'frames' | 'reference';

const KLING_O3_TIERS = ['standard', 'pro', '4k'] as const;

function defaultEndpoints(): Record<string, string> {
  const e: Record<string, string> = {
    'veo-3.1': 'fal-ai/veo3.1',
    'veo-3.1:image': 'fal-ai/veo3.1/image-to-video',
    'veo-3.1:frames': 'fal-ai/veo3.1/first-last-frame-to-video',
    'veo-3.1-fast': 'fal-ai/veo3.1/fast',
    'veo-3.1-fast:image': 'fal-ai/veo3.1/fast/image-to-video',
    'veo-3.1-fast:frames': 'fal-ai/veo3.1/fast/first-last-frame-to-video',
    'sora-2': 'fal-ai/sora-2/text-to-video',
    'sora-2:image': 'fal-ai/sora-2/image-to-video',
    'sora-2-pro': 'fal-ai/sora-2/text-to-video/pro',
    'sora-2-pro:image': 'fal-ai/sora-2/image-to-video/pro',
    'kling-2.6': 'fal-ai/kling-video/v2.6/pro/text-to-video',
    'kling-2.6:image': 'fal-ai/kling-video/v2.6/pro/image-to-video',
    'seedance-2.0': 'bytedance/seedance-2.0/text-to-video',
    'seedance-2.0:reference': 'bytedance/seedance-2.0/reference-to-video',
    'seedance-2.0-fast': 'bytedance/seedance-2.0/fast/text-to-video',
    'seedance-2.0-fast:reference': 'bytedance/seedance-2.0/fast/reference-to-video',
    'seedance-2.0-frames': 'bytedance/seedance-2.0/image-to-video',
    'seedance-2.0-frames-fast': 'bytedance/seedance-2.0/fast/image-to-video',
  };
  // Kling O3's quality is its tier: one family of endpoints per tier.
  for (const tier of KLING_O3_TIERS) {
    e[`kling-o3-${tier}`] = `fal-ai/kling-video/o3/${tier}/text-to-video`;
    e[`kling-o3-${tier}:image`] = `fal-ai/kling-video/o3/${tier}/image-to-video`;
    e[`kling-o3-${tier}:reference`] = `fal-ai/kling-video/o3/${tier}/reference-to-video`;
  }
  return e;
}
export const FAL_DEFAULT_ENDPOINTS: Readonly<Record<string, string>> = Object.freeze(defaultEndpoints());

// What fal's schemas take (test/contracts/fal/, held to them by test/unit/fal-contracts.test.ts).
export const KLING_RATIOS: readonly string[] = ['16:9', '9:16', '1:1'];
export const FAL_VEO_RATIOS: readonly string[] = ['16:9', '9:16'];
// Seedance reference-to-video's image_urls: up to 9 images.
export const SEEDANCE_MAX_IMAGES = 9;

const family = (model: string): 'veo' | 'sora' | 'kling-2.6' | 'kling-o3' | 'seedance' =>
  model.startsWith('sora-') ? 'sora' : model.startsWith('seedance-') ? 'seedance' : model === 'kling-2.6' || model === 'kling-o3' ? model : 'veo';

/** What the fal route cannot make, as a 400 naming the field; undefined when it can. */
export function falRefusal(params: Record<string, unknown>, attachedImages = 0): string | undefined {
  const model = String(params.model);
  switch (family(model)) {
    case 'kling-2.6':
    case 'kling-o3':
      if (!KLING_RATIOS.includes(String(params.aspect_ratio))) return `aspect_ratio: ${model} on fal makes ${KLING_RATIOS.join(', ')} videos, not ${String(params.aspect_ratio)}`;
      return undefined;
    case 'sora':
      if (model === 'sora-2' && (params.hd || params.resolution === '1080p')) return 'hd: sora-2 on fal makes 720p only; ask sora-2-pro for hd';
      return undefined;
    case 'seedance':
      // Seedance's image-to-video animates frames and takes no references beside them (fal's page lists none).
      if (model.includes('-frames') && attachedImages > 0) {
        return `reference_image_urls: ${model} on fal animates the first and last frames only; reference, brand and product images need seedance-2.0 or seedance-2.0-fast`;
      }
      if (attachedImages > SEEDANCE_MAX_IMAGES) {
        return `reference_image_urls: ${model} on fal takes at most ${SEEDANCE_MAX_IMAGES} images in all; this request attaches ${attachedImages} (reference URLs, brand and product images)`;
      }
      return undefined;
    case 'veo':
      if (!FAL_VEO_RATIOS.includes(String(params.aspect_ratio))) return `aspect_ratio: ${model} on fal makes ${FAL_VEO_RATIOS.join(' or ')} videos, not ${String(params.aspect_ratio)}`;
      if (params.reference_image_url) return `reference_image_url: ${model} on fal takes no reference image (first and last frames only)`;
      return undefined;
  }
}

function kindOf(params: Record<string, unknown>, references: number): InputKind {
  const model = String(params.model);
  switch (family(model)) {
    case 'sora':
    case 'kling-2.6':
      return params.reference_image_url ? 'image' : 'text';
    case 'kling-o3':
      // References go only to reference-to-video, which also takes the frames; frames alone animate an image.
      return references > 0 ? 'reference' : params.first_frame_image_url ? 'image' : 'text';
    case 'seedance':
      return model.includes('-frames') ? 'text' : references > 0 ? 'reference' : 'text';
    case 'veo':
      return params.first_frame_image_url && params.last_frame_image_url ? 'frames' : params.first_frame_image_url ? 'image' : 'text';
  }
}

/** The key of FAL_DEFAULT_ENDPOINTS (and of FAL_MODEL_ENDPOINTS) for a request. */
export function endpointKey(params: Record<string, unknown>, references: number): string {
  const model = String(params.model);
  const kind = kindOf(params, references);
  const base = model === 'kling-o3' ? `kling-o3-${String(params.quality ?? 'pro')}` : model;
  return kind === 'text' ? base : `${base}:${kind}`;
}

/**
 * The endpoint and the input fal's model page names, from our stored request and the links of
 * the images it attaches (reference_image_url(s), then the brand's, then the products', in that order).
 */
export function falInput(
  params: Record<string, unknown>,
  overrides: Readonly<Record<string, string>>,
  attached: readonly string[] = [],
): { endpoint: string; input: Record<string, unknown> } {
  const model = String(params.model);
  const key = endpointKey(params, attached.length);
  const endpoint = overrides[key] ?? FAL_DEFAULT_ENDPOINTS[key];
  if (!endpoint) throw new Error(`no fal endpoint for ${key}`);
  const kind = kindOf(params, attached.length);
  const seconds = Number(params.duration);
  switch (family(model)) {
    case 'kling-2.6': {
      const input: Record<string, unknown> = { prompt: params.prompt, duration: String(seconds), generate_audio: Boolean(params.generate_audio) };
      // Image-to-video takes its picture as start_image_url and no aspect ratio (the picture sets the frame).
      if (kind === 'image') input.start_image_url = params.reference_image_url;
      else input.aspect_ratio = params.aspect_ratio;
      return { endpoint, input };
    }
    case 'kling-o3': {
      const input: Record<string, unknown> = { prompt: params.prompt, duration: String(seconds), generate_audio: Boolean(params.generate_audio) };
      if (kind === 'image') {
        // The start frame sets the shape: fal's image-to-video takes no aspect ratio.
        input.image_url = params.first_frame_image_url;
        if (params.last_frame_image_url) input.end_image_url = params.last_frame_image_url;
        return { endpoint, input };
      }
      input.aspect_ratio = params.aspect_ratio;
      if (kind === 'reference') {
        input.image_urls = [...attached];
        if (params.first_frame_image_url) input.start_image_url = params.first_frame_image_url;
        if (params.last_frame_image_url) input.end_image_url = params.last_frame_image_url;
      }
      return { endpoint, input };
    }
    case 'seedance': {
      const input: Record<string, unknown> = {
        prompt: params.prompt,
        aspect_ratio: params.aspect_ratio,
        duration: String(seconds),
        resolution: params.resolution ?? '720p',
        generate_audio: Boolean(params.generate_audio),
      };
      if (model.includes('-frames')) {
        input.image_url = params.first_frame_image_url;
        if (params.last_frame_image_url) input.end_image_url = params.last_frame_image_url;
      } else if (kind === 'reference') {
        input.image_urls = [...attached];
      }
      return { endpoint, input };
    }
    case 'sora': {
      // Sora makes its sound always; hd is sora-2-pro's 1080p.
      const input: Record<string, unknown> = { prompt: params.prompt, aspect_ratio: params.aspect_ratio, duration: seconds, resolution: params.hd ? '1080p' : params.resolution };
      if (kind === 'image') input.image_url = params.reference_image_url;
      return { endpoint, input };
    }
    case 'veo': {
      const input: Record<string, unknown> = {
        prompt: params.prompt,
        aspect_ratio: params.aspect_ratio,
        duration: `${seconds}s`,
        resolution: params.resolution,
        generate_audio: Boolean(params.generate_audio),
      };
      if (kind === 'image') input.image_url = params.first_frame_image_url;
      if (kind === 'frames') {
        input.first_frame_url = params.first_frame_image_url;
        input.last_frame_url = params.last_frame_image_url;
      }
      return { endpoint, input };
    }
  }
}
