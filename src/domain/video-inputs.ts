import { z } from 'zod';
import { VIDEO_MODELS } from './generation-types.ts';
import type { VideoModel } from './generation-types.ts';
import {
  boolWithDefault,
  GENERATION_MAX,
  languageCode,
  lowerUuid,
  optional,
  orList,
  pixels,
  productIds,
  requiredEnum,
  requiredText,
  requiredUrl,
  requiredUuid,
  seconds,
  urlList,
  whole,
  withDefault,
} from './generation-fields.ts';
import { chars, inputUrl } from './inputs.ts';
import {
  allowsAspectRatio,
  allowsDuration,
  allowsResolution,
  describeAspectRatios,
  describeDurations,
  KLING_QUALITIES,
  VIDEO_MODEL_TABLE,
} from './video-models.ts';
import type { KlingQuality, VideoResolution } from './video-models.ts';

type Ctx = z.core.$RefinementCtx;
const fail = (ctx: Ctx, field: string, message: string): void => {
  ctx.addIssue({ code: 'custom', path: [field], message });
};
// A transform runs only on input that passed the object's own checks, so any issue here is one of ours.
const failed = (ctx: Ctx): boolean => ctx.issues.length > 0;

// ---- POST /videos/talking-avatar -----------------------------------------------------------------------------------

export const AVATAR_TYPES = ['platform', 'custom', 'product'] as const;
export type AvatarType = (typeof AVATAR_TYPES)[number];
export const LIPSYNC_MODELS = ['heygen-avatar4', 'lipsync-2.0'] as const;
export type LipsyncModel = (typeof LIPSYNC_MODELS)[number];

type TalkingAvatarCommon = { avatar_id: string; avatar_type: AvatarType; lipsync_model: LipsyncModel };
/** Exactly one source: an existing voiceover, or a script and a voice to make one. */
export type TalkingAvatarParams = TalkingAvatarCommon &
  (
    | { voiceover_id: string; script?: undefined; voice_id?: undefined }
    | { voiceover_id?: undefined; script: string; voice_id: string }
  );

export const talkingAvatarInput = z
  .object({
    avatar_id: requiredUuid,
    avatar_type: requiredEnum(AVATAR_TYPES),
    script: optional(requiredText(GENERATION_MAX.script)),
    voice_id: optional(requiredText(GENERATION_MAX.voiceId)),
    voiceover_id: optional(lowerUuid),
    lipsync_model: withDefault(requiredEnum(LIPSYNC_MODELS), 'heygen-avatar4'),
  })
  .transform((v, ctx): TalkingAvatarParams => {
    const common = { avatar_id: v.avatar_id, avatar_type: v.avatar_type, lipsync_model: v.lipsync_model };
    // The spec: voiceover_id takes precedence, so a script or voice sent with it is dropped, not refused.
    if (v.voiceover_id) return { ...common, voiceover_id: v.voiceover_id };
    if (!v.script) fail(ctx, 'script', 'is required with voice_id, or give voiceover_id');
    else if (!v.voice_id) fail(ctx, 'voice_id', 'is required with script, or give voiceover_id');
    if (failed(ctx) || !v.script || !v.voice_id) return z.NEVER;
    return { ...common, script: v.script, voice_id: v.voice_id };
  });

// ---- POST /videos/ai-video -----------------------------------------------------------------------------------------

export type AiVideoParams = {
  model: VideoModel;
  prompt: string;
  aspect_ratio: string;
  duration: number;
  resolution: VideoResolution;
  /** kling-o3 only; absent on every other model. */
  quality?: KlingQuality;
  reference_image_url?: string;
  /** True only on Sora models. */
  hd: boolean;
  generate_audio: boolean;
  first_frame_image_url?: string;
  last_frame_image_url?: string;
  reference_image_urls: string[];
  /** Kept only for models that use them (seedance*, kling-o3); [] and absent elsewhere. */
  brand_id?: string;
  product_ids: string[];
};

const SORA_MODELS = VIDEO_MODELS.filter((m) => VIDEO_MODEL_TABLE[m].hd);
const FRAME_MODELS = VIDEO_MODELS.filter((m) => VIDEO_MODEL_TABLE[m].takesFrames);
const REFERENCE_MODELS = VIDEO_MODELS.filter((m) => VIDEO_MODEL_TABLE[m].maxReferenceImages > 0);

export const aiVideoInput = z
  .object({
    model: requiredEnum(VIDEO_MODELS),
    prompt: requiredText(GENERATION_MAX.prompt),
    // Strings here; which values are allowed depends on the model, checked below with a message naming it.
    aspect_ratio: chars(GENERATION_MAX.shortWord, z.string({ error: (i) => (i.input === undefined ? 'is required' : 'must be a string') })).trim(),
    duration: z.number({ error: (i) => (i.input === undefined ? 'is required' : 'must be a number of seconds') }),
    resolution: optional(chars(GENERATION_MAX.shortWord, z.string({ error: 'must be a string' })).trim()),
    // Checked on every model, though only kling-o3 uses it: a misspelt value is a client bug worth reporting.
    quality: optional(requiredEnum(KLING_QUALITIES)),
    reference_image_url: optional(inputUrl),
    hd: boolWithDefault(false),
    generate_audio: optional(z.boolean({ error: 'must be true or false' })),
    first_frame_image_url: optional(inputUrl),
    last_frame_image_url: optional(inputUrl),
    reference_image_urls: withDefault(urlList, []),
    brand_id: optional(lowerUuid),
    product_ids: productIds,
  })
  .transform((v, ctx): AiVideoParams => {
    const spec = VIDEO_MODEL_TABLE[v.model];
    const m = v.model;
    if (!allowsAspectRatio(m, v.aspect_ratio)) fail(ctx, 'aspect_ratio', `${m} takes ${describeAspectRatios(m)}`);
    if (!allowsDuration(m, v.duration)) fail(ctx, 'duration', `${m} takes ${describeDurations(m)}`);
    const resolution = v.resolution ?? spec.defaultResolution;
    if (!allowsResolution(m, resolution)) fail(ctx, 'resolution', `${m} takes ${orList(spec.resolutions)}`);
    if (v.hd && !spec.hd) fail(ctx, 'hd', `only Sora models (${orList(SORA_MODELS, 'and')}) take hd; ${m} does not`);
    if (!spec.takesFrames) {
      const frames = `only ${orList(FRAME_MODELS, 'and')} take frame images; ${m} does not`;
      if (v.first_frame_image_url) fail(ctx, 'first_frame_image_url', frames);
      if (v.last_frame_image_url) fail(ctx, 'last_frame_image_url', frames);
    } else if (!v.first_frame_image_url) {
      if (spec.requiresFirstFrame) fail(ctx, 'first_frame_image_url', `is required for ${m}`);
      // A last frame alone has nothing to interpolate from; the upstream models refuse it too.
      else if (v.last_frame_image_url) fail(ctx, 'first_frame_image_url', 'is required with last_frame_image_url');
    }
    const refs = v.reference_image_urls.length;
    if (refs > 0 && spec.maxReferenceImages === 0) {
      fail(ctx, 'reference_image_urls', `only ${orList(REFERENCE_MODELS, 'and')} take reference images; ${m} does not`);
    } else if (refs > spec.maxReferenceImages) {
      fail(ctx, 'reference_image_urls', `${m} takes at most ${spec.maxReferenceImages} reference images`);
    }
    if (failed(ctx)) return z.NEVER;

    const out: AiVideoParams = {
      model: m,
      prompt: v.prompt,
      aspect_ratio: v.aspect_ratio,
      duration: v.duration,
      resolution: resolution as VideoResolution,
      hd: v.hd,
      generate_audio: v.generate_audio ?? spec.defaultGenerateAudio,
      reference_image_urls: v.reference_image_urls,
      product_ids: spec.usesBrandAndProducts ? v.product_ids : [],
    };
    if (spec.takesQuality) out.quality = v.quality ?? 'pro';
    if (v.reference_image_url) out.reference_image_url = v.reference_image_url;
    if (v.first_frame_image_url) out.first_frame_image_url = v.first_frame_image_url;
    if (v.last_frame_image_url) out.last_frame_image_url = v.last_frame_image_url;
    if (spec.usesBrandAndProducts && v.brand_id) out.brand_id = v.brand_id;
    return out;
  });

// ---- POST /videos/swap-avatar --------------------------------------------------------------------------------------

export const SWAP_MODES = ['standard', 'pro'] as const;
export type SwapMode = (typeof SWAP_MODES)[number];

type SwapAvatarCommon = { video_url: string; mode: SwapMode; duration: number; width: number; height: number };
/** One face source: a known avatar, or a face image. */
export type SwapAvatarParams = SwapAvatarCommon &
  (
    | { avatar_id: string; avatar_type: AvatarType; image_url?: undefined }
    | { avatar_id?: undefined; avatar_type?: undefined; image_url: string }
  );

export const swapAvatarInput = z
  .object({
    video_url: requiredUrl,
    mode: requiredEnum(SWAP_MODES),
    duration: seconds(1, 30),
    width: pixels,
    height: pixels,
    avatar_id: optional(lowerUuid),
    avatar_type: optional(requiredEnum(AVATAR_TYPES)),
    image_url: optional(inputUrl),
  })
  .transform((v, ctx): SwapAvatarParams => {
    const common = { video_url: v.video_url, mode: v.mode, duration: v.duration, width: v.width, height: v.height };
    // Two faces is ambiguous; refusing is clearer than silently preferring one.
    if (v.avatar_id && v.image_url) fail(ctx, 'image_url', 'give either avatar_id or image_url, not both');
    else if (!v.avatar_id && !v.image_url) fail(ctx, 'avatar_id', 'is required, or give image_url');
    else if (v.avatar_id && !v.avatar_type) fail(ctx, 'avatar_type', 'is required with avatar_id');
    if (failed(ctx)) return z.NEVER;
    // An avatar_type sent with image_url describes nothing; it is dropped.
    if (v.image_url) return { ...common, image_url: v.image_url };
    if (v.avatar_id && v.avatar_type) return { ...common, avatar_id: v.avatar_id, avatar_type: v.avatar_type };
    return z.NEVER;
  });

// ---- POST /videos/localize -----------------------------------------------------------------------------------------

export const LOCALIZE_MODES = ['speed', 'precision'] as const;
export type LocalizeMode = (typeof LOCALIZE_MODES)[number];

export const localizeInput = z.object({
  video_url: requiredUrl,
  mode: requiredEnum(LOCALIZE_MODES),
  output_language: languageCode,
  duration: seconds(1, 120),
  width: pixels,
  height: pixels,
  translate_audio_only: boolWithDefault(false),
  speaker_num: optional(whole(1, 10)),
  enable_dynamic_duration: boolWithDefault(false),
});
export type LocalizeParams = z.output<typeof localizeInput>;

// ---- POST /videos/edit ---------------------------------------------------------------------------------------------

type VideoEditCommon = { template_id: string; language: string; auto_approve: boolean };
/** One source: a video by URL, or one of the team's finished generations. */
export type VideoEditParams = VideoEditCommon &
  ({ video_url: string; generation_id?: undefined } | { video_url?: undefined; generation_id: string });

export const videoEditInput = z
  .object({
    template_id: requiredText(GENERATION_MAX.templateId),
    video_url: optional(inputUrl),
    generation_id: optional(lowerUuid),
    language: withDefault(languageCode, 'en'),
    auto_approve: boolWithDefault(true),
  })
  .transform((v, ctx): VideoEditParams => {
    const common = { template_id: v.template_id, language: v.language, auto_approve: v.auto_approve };
    if (v.video_url && v.generation_id) fail(ctx, 'generation_id', 'give either video_url or generation_id, not both');
    else if (!v.video_url && !v.generation_id) fail(ctx, 'video_url', 'is required, or give generation_id');
    if (v.video_url && !failed(ctx)) return { ...common, video_url: v.video_url };
    if (v.generation_id && !failed(ctx)) return { ...common, generation_id: v.generation_id };
    return z.NEVER;
  });
