/*
 * Our requests in the Gemini API's terms, per googleapis/js-genai src/converters/_models_converters.ts
 * (generateVideosParametersToMldev / generateVideosConfigToMldev: POST models/{model}:predictLongRunning
 * with instances[0] {prompt, image, lastFrame, referenceImages[{image, referenceType}]} where an
 * image is {bytesBase64Encoded, mimeType}, and parameters {aspectRatio, durationSeconds,
 * resolution, sampleCount}; generateAudio is not accepted by the Gemini Developer API, Veo 3.1
 * makes sound always) and https://ai.google.dev/gemini-api/docs/image-generation (generateContent
 * with contents[0].parts [{text}, {inlineData {mimeType, data}}...] and generationConfig
 * {responseModalities ["IMAGE"], imageConfig {aspectRatio, imageSize}}).
 */
export const GEMINI_VIDEO_MODELS: Readonly<Record<string, string>> = {
  'veo-3.1': 'veo-3.1-generate-preview',
  'veo-3.1-fast': 'veo-3.1-fast-generate-preview',
};
export const GEMINI_DEFAULT_IMAGE_MODELS: Readonly<Record<string, string>> = { fast: 'gemini-2.5-flash-image', pro: 'gemini-3-pro-image-preview' };

const VEO_RATIOS = ['16:9', '9:16'];
const VEO_RESOLUTIONS = ['720p', '1080p'];
// Images, edits and product shots are one generateContent call with the references inline.
const IMAGE_OPERATIONS = ['text-to-image', 'image-edit', 'product-shots'];
const IMAGE_RATIOS = ['1:1', '2:3', '3:2', '3:4', '4:3', '4:5', '5:4', '9:16', '16:9', '21:9'];

export function geminiRefusal(operation: string, params: Record<string, unknown>): string | undefined {
  const model = String(params.model);
  if (operation === 'ai-video' && GEMINI_VIDEO_MODELS[model]) {
    if (!VEO_RATIOS.includes(String(params.aspect_ratio))) return `aspect_ratio: ${model} on Gemini makes ${VEO_RATIOS.join(' or ')} videos, not ${String(params.aspect_ratio)}`;
    if (!VEO_RESOLUTIONS.includes(String(params.resolution))) return `resolution: ${model} on Gemini makes ${VEO_RESOLUTIONS.join(' or ')} videos, not ${String(params.resolution)}`;
    if (params.reference_image_url && model === 'veo-3.1-fast') return 'reference_image_url: veo-3.1-fast on Gemini takes no reference image';
    return undefined;
  }
  if (IMAGE_OPERATIONS.includes(operation) && GEMINI_DEFAULT_IMAGE_MODELS[model]) {
    if (!IMAGE_RATIOS.includes(String(params.aspect_ratio))) return `aspect_ratio: ${model} on Gemini makes ${IMAGE_RATIOS.join(', ')} images, not ${String(params.aspect_ratio)}`;
    if (model === 'fast' && params.resolution !== '1k') return `resolution: fast on Gemini makes 1k images only, not ${String(params.resolution)}`;
    return undefined;
  }
  return `${model} (${operation}) is not served by the Gemini engine of this version (it serves ${Object.keys(GEMINI_VIDEO_MODELS).join(', ')} videos and ${Object.keys(GEMINI_DEFAULT_IMAGE_MODELS).join(', ')} images)`;
}

export const imageSizeOf = (resolution: unknown): string => String(resolution ?? '1k').toUpperCase();
