import { gql } from '../../api/client.ts';
import {
  CREATE_IMAGE_EDIT,
  CREATE_LOCALIZE,
  CREATE_PRODUCT_SHOTS,
  CREATE_SWAP_AVATAR,
  CREATE_TEXT_TO_SPEECH,
  CREATE_VIDEO_EDIT,
  GENERATIONS,
  PRODUCTS,
  QUOTE_IMAGE_EDIT,
  QUOTE_LOCALIZE,
  QUOTE_PRODUCT_SHOTS,
  QUOTE_SWAP_AVATAR,
  QUOTE_TEXT_TO_SPEECH,
  QUOTE_VIDEO_EDIT,
  STYLES_AND_TEMPLATES,
  VOICES,
} from '../../api/operations.ts';
import { IMAGE_MODELS, IMAGE_RESOLUTIONS, isImageOperation } from '../../../../src/domain/generation-types.ts';
import { LOCALIZE_MODES, SWAP_MODES } from '../../../../src/domain/video-inputs.ts';
import type { FieldsFormConfig } from './FieldsForm.tsx';
import { fromTable } from './from-table.ts';

const products = async (): Promise<[string, string][]> => (await gql<{ products: { items: { id: string; name: string }[] } }>(PRODUCTS, { limit: 100 })).products.items.map((p) => [p.id, p.name]);
const templates = async (which: 'styles' | 'captionTemplates'): Promise<[string, string][]> =>
  (await gql<Record<typeof which, { items: { id: string; name: string }[] }>>(STYLES_AND_TEMPLATES))[which].items.map((t) => [t.id, t.name]);
const voices = async (): Promise<[string, string][]> =>
  (await gql<{ voices: { items: { id: string; name: string; accent: string; gender: string }[] } }>(VOICES, { limit: 100 })).voices.items.map((v) => [v.id, `${v.name} (${v.gender}, ${v.accent})`]);
const finishedVideos = async (): Promise<[string, string][]> =>
  (await gql<{ generations: { items: { id: string; type: string; created_at: string }[] } }>(GENERATIONS, { limit: 100, status: 'completed' })).generations.items
    .filter((g) => !isImageOperation(g.type))
    .map((g) => [g.id, `${g.type} · ${new Date(g.created_at).toLocaleString()}`]);

const imageOptions = [
  { name: 'model', label: 'Model', kind: 'select', options: IMAGE_MODELS, initial: 'fast' },
  { name: 'aspect_ratio', label: 'Aspect ratio', kind: 'text', initial: '1:1', placeholder: '1:1' },
  { name: 'quantity', label: 'Images', kind: 'number', initial: '1' },
  { name: 'resolution', label: 'Resolution', kind: 'select', options: IMAGE_RESOLUTIONS, initial: '1k' },
] as const;

export const PRODUCT_SHOTS: FieldsFormConfig = {
  ...fromTable('product-shots'),
  fields: [
    { name: 'product_id', label: 'Product', kind: 'select', load: products, hint: 'Add products under Library > Products' },
    { name: 'style_id', label: 'Style', kind: 'select', load: () => templates('styles') },
    { name: 'additional_prompt', label: 'Extra direction', kind: 'textarea', optional: true },
    ...imageOptions,
  ],
  quote: QUOTE_PRODUCT_SHOTS,
  create: CREATE_PRODUCT_SHOTS,
  submitLabel: 'Create product shots',
};

export const IMAGE_EDIT: FieldsFormConfig = {
  ...fromTable('image-edit'),
  fields: [
    { name: 'prompt', label: 'What to change', kind: 'textarea' },
    { name: 'reference_image_urls', label: 'Image URLs (one per line)', kind: 'urls', upload: 'image' },
    ...imageOptions,
  ],
  quote: QUOTE_IMAGE_EDIT,
  create: CREATE_IMAGE_EDIT,
  submitLabel: 'Edit image',
};

export const SWAP_AVATAR: FieldsFormConfig = {
  ...fromTable('swap-avatar'),
  fields: [
    { name: 'video_url', label: 'Video URL', kind: 'url', upload: 'video' },
    { name: 'image_url', label: 'Face image URL', kind: 'url', upload: 'image' },
    { name: 'mode', label: 'Mode', kind: 'select', options: SWAP_MODES, initial: 'standard' },
    { name: 'duration', label: 'Seconds (1-30)', kind: 'number', initial: '10' },
    { name: 'width', label: 'Width', kind: 'number', initial: '1080' },
    { name: 'height', label: 'Height', kind: 'number', initial: '1920' },
  ],
  quote: QUOTE_SWAP_AVATAR,
  create: CREATE_SWAP_AVATAR,
  submitLabel: 'Swap the face',
};

export const LOCALIZE: FieldsFormConfig = {
  ...fromTable('localize'),
  fields: [
    { name: 'video_url', label: 'Video URL', kind: 'url', upload: 'video' },
    { name: 'output_language', label: 'Language', kind: 'text', initial: 'es', placeholder: 'es, fr, de-DE' },
    { name: 'mode', label: 'Mode', kind: 'select', options: LOCALIZE_MODES, initial: 'speed' },
    { name: 'duration', label: 'Seconds (1-120)', kind: 'number', initial: '15' },
    { name: 'width', label: 'Width', kind: 'number', initial: '1080' },
    { name: 'height', label: 'Height', kind: 'number', initial: '1920' },
    { name: 'speaker_num', label: 'Speakers', kind: 'number', optional: true },
    { name: 'translate_audio_only', label: 'Translate the audio only', kind: 'checkbox' },
    { name: 'enable_dynamic_duration', label: 'Let the length change', kind: 'checkbox' },
  ],
  quote: QUOTE_LOCALIZE,
  create: CREATE_LOCALIZE,
  submitLabel: 'Localize video',
};

export const VIDEO_EDIT: FieldsFormConfig = {
  ...fromTable('video-edit'),
  fields: [
    { name: 'generation_id', label: 'One of your videos', kind: 'select', load: finishedVideos, optional: true },
    { name: 'video_url', label: 'or a video URL', kind: 'url', optional: true, upload: 'video' },
    { name: 'template_id', label: 'Caption style', kind: 'select', load: () => templates('captionTemplates') },
    { name: 'language', label: 'Language', kind: 'text', initial: 'en' },
    { name: 'auto_approve', label: 'Approve automatically', kind: 'checkbox', initial: true },
  ],
  quote: QUOTE_VIDEO_EDIT,
  create: CREATE_VIDEO_EDIT,
  submitLabel: 'Add captions',
};

export const TEXT_TO_SPEECH: FieldsFormConfig = {
  ...fromTable('text-to-speech'),
  fields: [
    { name: 'voice_id', label: 'Voice', kind: 'select', load: voices, hint: 'Hear every voice on the talking-avatar form' },
    { name: 'text', label: 'Text', kind: 'textarea' },
  ],
  quote: QUOTE_TEXT_TO_SPEECH,
  create: CREATE_TEXT_TO_SPEECH,
  submitLabel: 'Make voiceover',
  inline: true,
};
