/*
 * Veo 3.1 on fal, per its model pages: https://fal.ai/models/fal-ai/veo3.1/api (text to video:
 * prompt, aspect_ratio 16:9 | 9:16, duration "4s" | "6s" | "8s", resolution 720p | 1080p | 4k,
 * generate_audio), https://fal.ai/models/fal-ai/veo3.1/image-to-video/api (image_url),
 * https://fal.ai/models/fal-ai/veo3.1/first-last-frame-to-video/api (first_frame_url,
 * last_frame_url), and the same three under fal-ai/veo3.1/fast. The result is {video: {url}}.
 */
export const FAL_MODELS = ['veo-3.1', 'veo-3.1-fast'] as const;
export type FalModel = (typeof FAL_MODELS)[number];

type InputKind = 'text' | 'image' | 'frames';

export const FAL_DEFAULT_ENDPOINTS: Readonly<Record<string, string>> = {
  'veo-3.1': 'fal-ai/veo3.1',
  'veo-3.1:image': 'fal-ai/veo3.1/image-to-video',
  'veo-3.1:frames': 'fal-ai/veo3.1/first-last-frame-to-video',
  'veo-3.1-fast': 'fal-ai/veo3.1/fast',
  'veo-3.1-fast:image': 'fal-ai/veo3.1/fast/image-to-video',
  'veo-3.1-fast:frames': 'fal-ai/veo3.1/fast/first-last-frame-to-video',
};

const FAL_VEO_RATIOS = ['16:9', '9:16'];

/** What the fal route cannot make, as a 400 naming the field; undefined when it can. */
export function falRefusal(params: Record<string, unknown>): string | undefined {
  if (!FAL_VEO_RATIOS.includes(String(params.aspect_ratio))) {
    return `aspect_ratio: ${String(params.model)} on fal makes ${FAL_VEO_RATIOS.join(' or ')} videos, not ${String(params.aspect_ratio)}`;
  }
  if (params.reference_image_url) return `reference_image_url: ${String(params.model)} on fal takes no reference image (first and last frames only)`;
  return undefined;
}

/** The endpoint and the input fal's model page names, from our stored request. */
export function falInput(params: Record<string, unknown>, overrides: Readonly<Record<string, string>>): { endpoint: string; input: Record<string, unknown> } {
  const model = String(params.model);
  const kind: InputKind = params.first_frame_image_url && params.last_frame_image_url ? 'frames' : params.first_frame_image_url ? 'image' : 'text';
  const key = kind === 'text' ? model : `${model}:${kind}`;
  const endpoint = overrides[key] ?? FAL_DEFAULT_ENDPOINTS[key];
  if (!endpoint) throw new Error(`no fal endpoint for ${key}`);
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
