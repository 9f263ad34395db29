/*
 * The models fal serves for us and their inputs, per fal's model pages. Veo 3.1: https://fal.ai/models/fal-ai/veo3.1/api (text to video:
 * prompt, aspect_ratio 16:9 | 9:16, duration "4s" | "6s" | "8s", resolution 720p | 1080p | 4k,
 * generate_audio), https://fal.ai/models/fal-ai/veo3.1/image-to-video/api (image_url),
 * https://fal.ai/models/fal-ai/veo3.1/first-last-frame-to-video/api (first_frame_url,
 * last_frame_url), and the same three under fal-ai/veo3.1/fast. Sora 2:
 * https://fal.ai/docs/model-api-reference/video-generation-api/sora-2-text-to-video (prompt,
 * resolution 720p, aspect_ratio 16:9 | 9:16, duration 4 | 8 | 12 | 16 | 20), its /pro variant
 * (resolution 720p | 1080p) and image-to-video (image_url). Kling 2.6 Pro:
 * https://fal.ai/models/fal-ai/kling-video/v2.6/pro/text-to-video/llms.txt (prompt, duration "5" | "10",
 * aspect_ratio 16:9 | 9:16 | 1:1, generate_audio; no resolution: it makes its own) and its
 * image-to-video (image_url). Every result is {video: {url}}.
 */
export const FAL_MODELS = ['veo-3.1', 'veo-3.1-fast', 'sora-2', 'sora-2-pro', 'kling-2.6'] as const;
export type FalModel = (typeof FAL_MODELS)[number];

type InputKind = 'text' | 'image' | 'frames';

export const FAL_DEFAULT_ENDPOINTS: Readonly<Record<string, string>> = {
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
};

const KLING_RATIOS = ['16:9', '9:16', '1:1'];

const isSora = (params: Record<string, unknown>) => String(params.model).startsWith('sora-');

const FAL_VEO_RATIOS = ['16:9', '9:16'];

/** What the fal route cannot make, as a 400 naming the field; undefined when it can. */
export function falRefusal(params: Record<string, unknown>): string | undefined {
  if (params.model === 'kling-2.6') {
    if (!KLING_RATIOS.includes(String(params.aspect_ratio))) return `aspect_ratio: kling-2.6 on fal makes ${KLING_RATIOS.join(', ')} videos, not ${String(params.aspect_ratio)}`;
    return undefined;
  }
  if (isSora(params)) {
    if (params.model === 'sora-2' && (params.hd || params.resolution === '1080p')) return 'hd: sora-2 on fal makes 720p only; ask sora-2-pro for hd';
    return undefined;
  }
  if (!FAL_VEO_RATIOS.includes(String(params.aspect_ratio))) {
    return `aspect_ratio: ${String(params.model)} on fal makes ${FAL_VEO_RATIOS.join(' or ')} videos, not ${String(params.aspect_ratio)}`;
  }
  if (params.reference_image_url) return `reference_image_url: ${String(params.model)} on fal takes no reference image (first and last frames only)`;
  return undefined;
}

/** The endpoint and the input fal's model page names, from our stored request. */
export function falInput(params: Record<string, unknown>, overrides: Readonly<Record<string, string>>): { endpoint: string; input: Record<string, unknown> } {
  const model = String(params.model);
  const sora = isSora(params);
  const kling = params.model === 'kling-2.6';
  const kind: InputKind = sora || kling
    ? params.reference_image_url ? 'image' : 'text'
    : params.first_frame_image_url && params.last_frame_image_url ? 'frames' : params.first_frame_image_url ? 'image' : 'text';
  const key = kind === 'text' ? model : `${model}:${kind}`;
  const endpoint = overrides[key] ?? FAL_DEFAULT_ENDPOINTS[key];
  if (!endpoint) throw new Error(`no fal endpoint for ${key}`);
  if (kling) {
    const input: Record<string, unknown> = { prompt: params.prompt, aspect_ratio: params.aspect_ratio, duration: String(Number(params.duration)), generate_audio: Boolean(params.generate_audio) };
    if (kind === 'image') input.image_url = params.reference_image_url;
    return { endpoint, input };
  }
  if (sora) {
    // Sora makes its sound always; hd is sora-2-pro's 1080p.
    const input: Record<string, unknown> = { prompt: params.prompt, aspect_ratio: params.aspect_ratio, duration: Number(params.duration), resolution: params.hd ? '1080p' : params.resolution };
    if (kind === 'image') input.image_url = params.reference_image_url;
    return { endpoint, input };
  }
  const input: Record<string, unknown> = {
    prompt: params.prompt,
    aspect_ratio: params.aspect_ratio,
    duration: `${Number(params.duration)}s`,
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
