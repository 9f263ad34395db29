/** The `type` a generation answers with (create responses, lists, webhooks). */
export const GENERATION_TYPES = [
  'talking-avatar',
  'ai-video',
  'swap-avatar',
  'localize',
  'edit',
  'text-to-image',
  'product-shots',
  'image-edit',
] as const;
export type GenerationType = (typeof GENERATION_TYPES)[number];

export type GenerationKind = 'video' | 'image';

/** Kept apart from the type: /videos/edit and /images/edit both answer type `edit`. Voiceovers are not generations. */
export type OperationKind = GenerationKind | 'voice';

/**
 * Which endpoint made it (unambiguous where `type` is not), and what it makes. Only the names and
 * kinds live here, where the engines read them without loading every input schema; everything else
 * about an operation is its entry in the operation table (operations.ts), keyed by these names.
 */
export const OPERATION_KINDS = {
  'talking-avatar': 'video',
  'ai-video': 'video',
  'swap-avatar': 'video',
  localize: 'video',
  'video-edit': 'video',
  'text-to-image': 'image',
  'product-shots': 'image',
  'image-edit': 'image',
} as const satisfies Record<string, GenerationKind>;
export type GenerationOperation = keyof typeof OPERATION_KINDS;
export const GENERATION_OPERATIONS = Object.keys(OPERATION_KINDS) as readonly GenerationOperation[];

/** True for the operations that make images (a route key or an operation name from the outside may be anything). */
export const isImageOperation = (operation: string): boolean => OPERATION_KINDS[operation as GenerationOperation] === 'image';

export const GENERATION_STATUSES = ['processing', 'completed', 'failed'] as const;
export type GenerationStatus = (typeof GENERATION_STATUSES)[number];

export const IMAGE_MODELS = ['fast', 'pro', 'gpt-2', 'gpt-2.5'] as const;
export type ImageModel = (typeof IMAGE_MODELS)[number];
export const IMAGE_EFFORTS = ['low', 'medium', 'high', 'xhigh', 'max'] as const;
export type ImageEffort = (typeof IMAGE_EFFORTS)[number];
export const IMAGE_RESOLUTIONS = ['1k', '2k', '4k'] as const;
export type ImageResolution = (typeof IMAGE_RESOLUTIONS)[number];

export const VIDEO_MODELS = [
  'sora-2',
  'sora-2-pro',
  'veo-3.1',
  'veo-3.1-fast',
  'kling-2.6',
  'kling-o3',
  'seedance-2.0',
  'seedance-2.0-fast',
  'seedance-2.0-frames',
  'seedance-2.0-frames-fast',
] as const;
export type VideoModel = (typeof VIDEO_MODELS)[number];
