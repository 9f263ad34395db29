// Request bodies of the eight create endpoints, parsed into normalised params (defaults applied,
// per-model rules checked, fields a model ignores dropped). Use with parseInput.
export {
  AVATAR_TYPES,
  LIPSYNC_MODELS,
  LOCALIZE_MODES,
  SWAP_MODES,
  aiVideoInput,
  localizeInput,
  swapAvatarInput,
  talkingAvatarInput,
  videoEditInput,
} from './video-inputs.ts';
export type {
  AiVideoParams,
  AvatarType,
  LipsyncModel,
  LocalizeMode,
  LocalizeParams,
  SwapAvatarParams,
  SwapMode,
  TalkingAvatarParams,
  VideoEditParams,
} from './video-inputs.ts';
export {
  IMAGE_LONG_SIDE,
  MAX_REFERENCE_IMAGES,
  checkReferenceImageTotal,
  imageEditInput,
  imageSize,
  productShotsInput,
  textToImageInput,
} from './image-inputs.ts';
export type { ImageEditParams, ImageSharedParams, ProductShotsParams, TextToImageParams } from './image-inputs.ts';
export { GENERATION_MAX } from './generation-fields.ts';
