/*
 * Our requests in the OpenAI API's terms, per openai/openai-node src/resources/videos.ts (POST
 * /videos, multipart {prompt, model, seconds "4" | "8" | "12", size 720x1280 | 1280x720 | 1024x1792 |
 * 1792x1024, input_reference: an image of exactly that size}) and src/resources/images.ts (POST
 * /images/generations {model, prompt, n 1-10, size 1024x1024 | 1536x1024 | 1024x1536, quality low | medium | high}, answers b64_json; POST
 * /images/edits, the same fields as multipart with the input images as `image[]` files).
 */
export const OPENAI_VIDEO_MODELS = ['sora-2', 'sora-2-pro'] as const;
export const OPENAI_IMAGE_MODELS = ['gpt-2', 'gpt-2.5'] as const;
export const OPENAI_DEFAULT_IMAGE_MODELS: Readonly<Record<string, string>> = { 'gpt-2': 'gpt-image-1', 'gpt-2.5': 'gpt-image-1' };

const SECONDS = [4, 8, 12];
// A request with images (an edit, a product shot, a branded image) goes to /images/edits.
const IMAGE_OPERATIONS = ['text-to-image', 'image-edit', 'product-shots'];

export function openaiRefusal(operation: string, params: Record<string, unknown>): string | undefined {
  const model = String(params.model);
  if (operation === 'ai-video' && (OPENAI_VIDEO_MODELS as readonly string[]).includes(model)) {
    if (!SECONDS.includes(Number(params.duration))) return `duration: ${model} on OpenAI makes ${SECONDS.join(', ')} second videos, not ${String(params.duration)}`;
    if (model === 'sora-2' && (params.hd || params.resolution === '1080p')) return 'hd: sora-2 on OpenAI makes 720p only; ask sora-2-pro for hd';
    return undefined;
  }
  if (IMAGE_OPERATIONS.includes(operation) && (OPENAI_IMAGE_MODELS as readonly string[]).includes(model)) {
    if (params.resolution !== '1k') return `resolution: ${model} on OpenAI makes 1k images only, not ${String(params.resolution)}`;
    return undefined;
  }
  return `${model} (${operation}) is not served by the OpenAI engine of this version (it serves ${OPENAI_VIDEO_MODELS.join(', ')} videos and ${OPENAI_IMAGE_MODELS.join(', ')} images)`;
}

/** The Videos API size: the ratio's orientation, the larger frame for hd or 1080p (sora-2-pro). */
export function soraSize(params: Record<string, unknown>): string {
  const portrait = params.aspect_ratio === '9:16';
  const large = Boolean(params.hd) || params.resolution === '1080p';
  if (portrait) return large ? '1024x1792' : '720x1280';
  return large ? '1792x1024' : '1280x720';
}

/** The Images API size nearest to the requested ratio. */
export function imageSize(aspectRatio: string): string {
  const [w, h] = aspectRatio.split(':').map(Number);
  const r = w && h ? w / h : 1;
  return r > 1.2 ? '1536x1024' : r < 1 / 1.2 ? '1024x1536' : '1024x1024';
}

/** Our effort as the Images API's quality; `fast` asks for its quickest. */
export function imageQuality(params: Record<string, unknown>): string {
  if (params.fast) return 'low';
  const effort = String(params.effort ?? 'medium');
  return effort === 'low' || effort === 'medium' ? effort : 'high';
}
