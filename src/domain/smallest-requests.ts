import { GENERATION_OPERATIONS, IMAGE_MODELS, VIDEO_MODELS, type GenerationOperation, type VideoModel } from './generation-types.ts';
import { VIDEO_MODEL_TABLE, VIDEO_RESOLUTIONS } from './video-models.ts';
import { LIPSYNC_MODELS } from './video-inputs.ts';

/*
 * The create bodies `adforge providers check --spend` may send for a route: every request a route
 * key covers in its cheapest forms (shortest, lowest resolution, one image, a few words). The
 * caller prices them with the create's own pricing and refusals and sends the cheapest one.
 */
export interface SpendInputs {
  /** A platform avatar's id (talking avatars; swap-avatar's face). */
  avatarId: string;
  voiceId: string;
  /** A caption template id (video edit). */
  templateId?: string;
  /** A public video the provider can fetch (swap-avatar, localize, video edit); without it those routes are skipped. */
  videoUrl?: string;
  /** A public image (image edit, models that need a first frame); without it those are skipped. */
  imageUrl?: string;
}

export interface SpendCandidate {
  operation: GenerationOperation;
  body: Record<string, unknown>;
}

const PROMPT = 'A red ball rolls slowly across a white table.';
const SCRIPT = 'Hello from adforge.';

function durationsOf(model: VideoModel): number[] {
  const rule = VIDEO_MODEL_TABLE[model].durations;
  if (rule.kind === 'list') return [...rule.values].sort((a, b) => a - b);
  return Array.from({ length: rule.max - rule.min + 1 }, (_, i) => rule.min + i);
}

function aiVideo(model: VideoModel, inputs: SpendInputs): SpendCandidate[] {
  const spec = VIDEO_MODEL_TABLE[model];
  if (spec.requiresFirstFrame && !inputs.imageUrl) return [];
  const ratio = spec.aspectRatios === 'any' || spec.aspectRatios.includes('16:9') ? '16:9' : spec.aspectRatios[0]!;
  const resolutions = VIDEO_RESOLUTIONS.filter((r) => spec.resolutions.includes(r));
  const out: SpendCandidate[] = [];
  for (const duration of durationsOf(model)) {
    for (const resolution of resolutions) {
      const body: Record<string, unknown> = { model, prompt: PROMPT, duration, aspect_ratio: ratio, resolution, generate_audio: false };
      if (spec.takesQuality) body.quality = 'standard';
      if (spec.requiresFirstFrame) body.first_frame_image_url = inputs.imageUrl;
      out.push({ operation: 'ai-video', body });
    }
  }
  return out;
}

function forOperation(operation: GenerationOperation, inputs: SpendInputs, model?: string): SpendCandidate[] {
  switch (operation) {
    case 'ai-video':
      return (model ? [model as VideoModel] : [...VIDEO_MODELS]).flatMap((m) => aiVideo(m, inputs));
    case 'text-to-image':
      return (model ? [model] : [...IMAGE_MODELS]).map((m) => ({
        operation,
        body: { model: m, prompt: PROMPT, quantity: 1, aspect_ratio: '1:1', resolution: '1k', ...(m.startsWith('gpt-') ? { effort: 'low' } : {}) },
      }));
    case 'image-edit':
      if (!inputs.imageUrl) return [];
      return (model ? [model] : [...IMAGE_MODELS]).map((m) => ({
        operation,
        body: { model: m, prompt: 'Make the background plain white.', reference_image_urls: [inputs.imageUrl], quantity: 1, aspect_ratio: '1:1', resolution: '1k', ...(m.startsWith('gpt-') ? { effort: 'low' } : {}) },
      }));
    case 'talking-avatar':
      return (model ? [model] : [...LIPSYNC_MODELS]).map((m) => ({
        operation,
        body: { avatar_id: inputs.avatarId, avatar_type: 'platform', script: SCRIPT, voice_id: inputs.voiceId, lipsync_model: m },
      }));
    case 'swap-avatar':
      return inputs.videoUrl ? [{ operation, body: { video_url: inputs.videoUrl, mode: 'standard', duration: 1, width: 720, height: 1280, avatar_id: inputs.avatarId, avatar_type: 'platform' } }] : [];
    case 'localize':
      return inputs.videoUrl ? [{ operation, body: { video_url: inputs.videoUrl, mode: 'speed', output_language: 'es', duration: 1, width: 720, height: 1280 } }] : [];
    case 'video-edit':
      return inputs.videoUrl && inputs.templateId ? [{ operation, body: { video_url: inputs.videoUrl, template_id: inputs.templateId, language: 'en', auto_approve: true } }] : [];
    case 'product-shots':
      // A product shot needs one of the team's products: the operator's checks team has none.
      return [];
  }
}

/**
 * Every candidate body for a route key (one of our models, an operation, or `*`), cheapest forms
 * first; empty when the route needs inputs that were not given (`needs` says which).
 */
export function spendCandidates(routeKey: string, inputs: SpendInputs): { candidates: SpendCandidate[]; needs?: string } {
  let candidates: SpendCandidate[];
  if ((VIDEO_MODELS as readonly string[]).includes(routeKey)) candidates = forOperation('ai-video', inputs, routeKey);
  else if ((IMAGE_MODELS as readonly string[]).includes(routeKey)) candidates = [...forOperation('text-to-image', inputs, routeKey), ...forOperation('image-edit', inputs, routeKey)];
  else if ((LIPSYNC_MODELS as readonly string[]).includes(routeKey)) candidates = forOperation('talking-avatar', inputs, routeKey);
  else if ((GENERATION_OPERATIONS as readonly string[]).includes(routeKey)) candidates = forOperation(routeKey as GenerationOperation, inputs);
  else candidates = GENERATION_OPERATIONS.flatMap((op) => forOperation(op, inputs));
  if (candidates.length) return { candidates };
  const needs = ['swap-avatar', 'localize', 'video-edit'].includes(routeKey) ? '--video-url (a public video the provider can fetch)' : '--image-url (a public image)';
  return { candidates, needs };
}
