import type { z } from 'zod';
import { imageEditInput, productShotsInput, textToImageInput } from './image-inputs.ts';
import { aiVideoInput, localizeInput, swapAvatarInput, talkingAvatarInput, videoEditInput } from './video-inputs.ts';
import { OPERATION_KINDS, type GenerationKind, type GenerationOperation, type GenerationType, type OperationKind } from './generation-types.ts';
import {
  aiVideoCredits,
  flatPriceText,
  imageCredits,
  localizeCredits,
  speechToSpeechCredits,
  swapAvatarCredits,
  swapAvatarPriceText,
  talkingAvatarCredits,
  talkingAvatarPriceText,
  TEXT_TO_SPEECH_CREDITS,
  VIDEO_EDIT_CREDITS,
  type AiVideoPriceParams,
  type ImagePriceParams,
  type LOCALIZE_CREDITS_PER_SECOND,
  type SWAP_AVATAR_CREDITS_PER_SECOND,
} from './pricing.ts';
import { speechToSpeechInput, textToSpeechInput } from './voiceover-inputs.ts';

/*
 * The operation table: one entry per thing a client can create, and everything the doors say about
 * it. REST registers its create and quote routes from it, GraphQL its mutations and quote queries,
 * campaigns their row types, quotes what can be priced, the dashboard its create tabs. What needs
 * the database (checking the ids a request names) is the operation's resolver in
 * services/generations/operations.ts, keyed by the same names.
 *
 * The voiceovers are entries too (kind `voice`): a campaign row, a quote and a dashboard tab take
 * them as they take a generation, so one list answers "what can be made". They are not generations:
 * no `type` rule, and their routes and mutations (synchronous, answering the voiceover) are
 * registered by the voice files, which the table tests hold to the names here.
 */

/** The two voiceovers: made at once, answering the voiceover, not a generation. */
export const VOICE_OPERATIONS = ['text-to-speech', 'speech-to-speech'] as const;
export type VoiceOperation = (typeof VOICE_OPERATIONS)[number];
export type Operation = GenerationOperation | VoiceOperation;

interface Entry<Params> {
  kind: OperationKind;
  /** The request body, parsed into normalised params (the same schema for REST, GraphQL and a campaign row). */
  schema: z.ZodType;
  /** The credits it charges, on the params its create prices (a speech-to-speech longer than the spec prices is null). */
  price: (params: Params) => number | null;
  /** The create's path under /api/v1; its quote is the same path under /quotes. */
  path: string;
  /** The create's REST operationId: `create<Name>`, its quote's `quote<Name>`. */
  operationId: string;
  /** The GraphQL mutation and its input type; the quote query is the mutation's name with `quote` for `create`. */
  graphql: { mutation: string; input: string };
  /** Whether a campaign row can name it: the row's `type` is then the operation's name. */
  campaign: boolean;
  /** The dashboard's create tab (its path under /create/) and the label on it; null for no form. */
  form: { tab: string; label: string } | null;
}

export interface GenerationEntry<Params = any> extends Entry<Params> {
  kind: GenerationKind;
  price: (params: Params) => number;
  /**
   * The `type` the generation answers with, given how many reference images the team's brand and
   * products bring to it (0 where the operation takes neither).
   */
  type: (brandAndProductImages: number) => GenerationType;
  /** The OpenAPI text of the create: its summary, the spec's words, and an example body. */
  openapi: { summary: string; spec: string; example: Record<string, unknown> };
  /** The "Credit cost: ..." sentence, written from the price constants; null where the description states none. */
  priceText: string | null;
}

export interface VoiceEntry<Params = any> extends Entry<Params> {
  kind: 'voice';
}

const always =
  (type: GenerationType) =>
  (_brandAndProductImages: number): GenerationType =>
    type;

type Mode<T> = keyof T;

const generations = {
  'talking-avatar': {
    /** The length of the script actually spoken: the request's, or the voiceover's text. */
    price: (p: { scriptLength: number }) => talkingAvatarCredits(p.scriptLength),
    priceText: talkingAvatarPriceText(),
    type: always('talking-avatar'),
    path: '/videos/talking-avatar',
    operationId: 'createTalkingAvatar',
    openapi: {
      summary: 'An avatar speaks a script or a voiceover',
      spec: 'Generates a lip-synced talking avatar video. Either `script` + `voice_id` (new voiceover) or `voiceover_id` (existing) is required; when both are given, `voiceover_id` takes precedence.',
      example: { avatar_id: '3f1c2a9e-7b4d-4e21-9a0f-5c6d7e8f9a0b', avatar_type: 'platform', script: 'Meet the trail shoe that grips wet rock.', voice_id: '21m00Tcm4TlvDq8ikWAM' },
    },
    graphql: { mutation: 'createTalkingAvatarVideo', input: 'TalkingAvatarInput' },
    campaign: true,
    form: { tab: 'talking-avatar', label: 'Talking avatar' },
    schema: talkingAvatarInput,
  },
  'ai-video': {
    price: (p: AiVideoPriceParams) => aiVideoCredits(p),
    priceText: null,
    type: always('ai-video'),
    path: '/videos/ai-video',
    operationId: 'createAiVideo',
    openapi: {
      summary: 'A video from a prompt (the model table decides ratios, durations and options)',
      spec: 'Text-to-video.',
      example: { model: 'veo-3.1-fast', prompt: 'A trail shoe splashing through a stream at dawn', aspect_ratio: '16:9', duration: 8 },
    },
    graphql: { mutation: 'createAiVideo', input: 'AiVideoInput' },
    campaign: true,
    form: { tab: 'ai-video', label: 'AI video' },
    schema: aiVideoInput,
  },
  'swap-avatar': {
    price: (p: { mode: Mode<typeof SWAP_AVATAR_CREDITS_PER_SECOND>; duration: number }) => swapAvatarCredits(p.mode, p.duration),
    priceText: swapAvatarPriceText(),
    type: always('swap-avatar'),
    path: '/videos/swap-avatar',
    operationId: 'createSwapAvatar',
    openapi: {
      summary: 'Swap the person in a video for an avatar',
      spec: 'Replaces the face in a video. Provide `avatar_id` + `avatar_type`, or `image_url`.',
      example: { video_url: 'https://example.com/ad.mp4', duration: 10, width: 720, height: 1280, image_url: 'https://example.com/face.png', mode: 'standard' },
    },
    graphql: { mutation: 'createSwapAvatarVideo', input: 'SwapAvatarInput' },
    campaign: true,
    form: { tab: 'swap-avatar', label: 'Avatar swap' },
    schema: swapAvatarInput,
  },
  localize: {
    price: (p: { mode: Mode<typeof LOCALIZE_CREDITS_PER_SECOND>; duration: number }) => localizeCredits(p.mode, p.duration),
    priceText: null,
    type: always('localize'),
    path: '/videos/localize',
    operationId: 'createLocalize',
    openapi: {
      summary: 'Dub a video into another language',
      spec: 'Translates and dubs a video; lip movements are adjusted.',
      example: { video_url: 'https://example.com/ad.mp4', output_language: 'es', width: 1280, height: 720, duration: 30, mode: 'speed' },
    },
    graphql: { mutation: 'createLocalizedVideo', input: 'LocalizeInput' },
    campaign: true,
    form: { tab: 'localize', label: 'Localize' },
    schema: localizeInput,
  },
  'video-edit': {
    price: (_p: object) => VIDEO_EDIT_CREDITS,
    priceText: flatPriceText(VIDEO_EDIT_CREDITS),
    type: always('edit'),
    path: '/videos/edit',
    operationId: 'createVideoEdit',
    openapi: {
      summary: 'Caption a video with a template',
      spec: 'Adds captions and effects using a caption template. Provide `video_url` or `generation_id`.',
      example: { template_id: 'bold-pop', video_url: 'https://example.com/ad.mp4' },
    },
    graphql: { mutation: 'createVideoEdit', input: 'VideoEditInput' },
    campaign: true,
    form: { tab: 'captions', label: 'Captions' },
    schema: videoEditInput,
  },
  'text-to-image': {
    price: (p: ImagePriceParams) => imageCredits(p),
    priceText: null,
    // The spec: reference images from the brand or products turn the request into an image edit.
    type: (brandAndProductImages) => (brandAndProductImages > 0 ? 'image-edit' : 'text-to-image'),
    path: '/images/text-to-image',
    operationId: 'createTextToImage',
    openapi: {
      summary: 'Images from a prompt',
      spec: 'Images from a prompt; a brand or products bring their reference images (the answer type is then `image-edit`).',
      example: { model: 'fast', prompt: 'A trail shoe on wet rock, morning light', aspect_ratio: '4:5', quantity: 2 },
    },
    graphql: { mutation: 'createTextToImage', input: 'TextToImageInput' },
    campaign: true,
    form: { tab: 'text-to-image', label: 'Text to image' },
    schema: textToImageInput,
  },
  'product-shots': {
    price: (p: ImagePriceParams) => imageCredits(p),
    priceText: null,
    type: always('product-shots'),
    path: '/images/product-shots',
    operationId: 'createProductShots',
    openapi: {
      summary: 'Product shots in a style',
      spec: 'Shared fields plus `product_id` (a product of the team), `style_id` (a style template) and an optional `additional_prompt` appended to the template prompt. A missing product or style yields 404.',
      example: { model: 'fast', aspect_ratio: '1:1', product_id: '3f1c2a9e-7b4d-4e21-9a0f-5c6d7e8f9a0b', style_id: 'studio-white' },
    },
    graphql: { mutation: 'createProductShots', input: 'ProductShotsInput' },
    campaign: true,
    form: { tab: 'product-shots', label: 'Product shots' },
    schema: productShotsInput,
  },
  'image-edit': {
    price: (p: ImagePriceParams) => imageCredits(p),
    priceText: null,
    type: always('edit'),
    path: '/images/edit',
    operationId: 'createImageEdit',
    openapi: {
      summary: 'Edit images from references',
      spec: 'Edits or combines reference images (at most 5 in all, from `reference_image_urls`, the brand and the products) as the prompt says.',
      example: { model: 'fast', prompt: 'Make the light warmer', aspect_ratio: '1:1', reference_image_urls: ['https://example.com/shot.png'] },
    },
    graphql: { mutation: 'createImageEdit', input: 'ImageEditInput' },
    campaign: true,
    form: { tab: 'image-edit', label: 'Image edit' },
    schema: imageEditInput,
  },
} as const satisfies { [O in GenerationOperation]: Omit<GenerationEntry, 'kind'> };

const voiceovers = {
  'text-to-speech': {
    price: () => TEXT_TO_SPEECH_CREDITS,
    path: '/voiceovers/text-to-speech',
    operationId: 'createTextToSpeech',
    graphql: { mutation: 'createTextToSpeech', input: 'TextToSpeechInput' },
    campaign: true,
    form: { tab: 'voiceover', label: 'Voiceover' },
    schema: textToSpeechInput,
  },
  'speech-to-speech': {
    /** Priced on the source's measured length, which only the service can fetch. */
    price: (p: { seconds: number }) => speechToSpeechCredits(p.seconds),
    path: '/voiceovers/speech-to-speech',
    operationId: 'createSpeechToSpeech',
    graphql: { mutation: 'createSpeechToSpeech', input: 'SpeechToSpeechInput' },
    campaign: false,
    form: null,
    schema: speechToSpeechInput,
  },
} as const satisfies { [O in VoiceOperation]: Omit<VoiceEntry, 'kind'> };

/** Each entry with its kind added (the order of the entries kept). */
function withKinds<K extends string, E extends object, Kind>(entries: { readonly [P in K]: E }, kindOf: (op: K) => Kind): { [P in K]: E & { kind: Kind } } {
  const out = {} as { [P in K]: E & { kind: Kind } };
  for (const op of Object.keys(entries) as K[]) out[op] = { kind: kindOf(op), ...entries[op] };
  return out;
}

/** Every generation operation's entry, its kind from the names' list (generation-types.ts). */
export const GENERATION_OPERATION_TABLE: { readonly [O in GenerationOperation]: GenerationEntry } = withKinds<GenerationOperation, Omit<GenerationEntry, 'kind'>, GenerationKind>(
  generations,
  (op) => OPERATION_KINDS[op],
);

/** The whole table, generations first (in the order of their names), then the voiceovers. */
export const OPERATION_TABLE: { readonly [O in Operation]: O extends GenerationOperation ? GenerationEntry : VoiceEntry } = {
  ...GENERATION_OPERATION_TABLE,
  ...withKinds<VoiceOperation, Omit<VoiceEntry, 'kind'>, 'voice'>(voiceovers, () => 'voice'),
};

export const OPERATIONS = Object.keys(OPERATION_TABLE) as readonly Operation[];

/** True for a voiceover: made and answered at once by the voiceover service, not a generation. */
export const isVoiceOperation = (operation: Operation): operation is VoiceOperation => OPERATION_TABLE[operation].kind === 'voice';

/** What the create endpoints price on; every key comes from that endpoint's normalised params. */
export type PriceParams = { [O in GenerationOperation]: Parameters<(typeof generations)[O]['price']>[0] };

/** The credits a create endpoint charges up front. */
export function priceOf<O extends GenerationOperation>(operation: O, params: PriceParams[O]): number {
  return GENERATION_OPERATION_TABLE[operation].price(params);
}

/** The create's OpenAPI tag, from what it makes. */
export const restTag = (e: GenerationEntry): 'Videos' | 'Images' => (e.kind === 'video' ? 'Videos' : 'Images');

/** The create's OpenAPI description: the spec's words, then its price, then how it answers. */
export const restDescription = (e: GenerationEntry): string =>
  `${[e.openapi.spec, e.priceText].filter(Boolean).join(' ')} Asynchronous: answers at once with \`status: processing\`; poll \`GET /generations/{id}\` or wait for the webhook.`;

/** `createTalkingAvatar` -> `TalkingAvatar`: the REST quote is `quote<Name>`. */
export const restName = (e: Entry<unknown>): string => e.operationId.replace(/^create/, '');

/** `createTalkingAvatarVideo` -> `quoteTalkingAvatarVideo`: the GraphQL quote beside the mutation. */
export const graphqlQuoteName = (e: Entry<unknown>): string => e.graphql.mutation.replace(/^create/, 'quote');

type Written = typeof generations & typeof voiceovers;

/** An operation a campaign row can name: the row's `type` column holds its name. */
export type CampaignType = { [O in Operation]: Written[O]['campaign'] extends true ? O : never }[Operation];

/** The operations a campaign row can name, in the table's order. */
export const CAMPAIGN_OPERATIONS = OPERATIONS.filter((o): o is CampaignType => OPERATION_TABLE[o].campaign);

/** An operation the dashboard has a create form for. */
export type FormOperation = { [O in Operation]: Written[O]['form'] extends null ? never : O }[Operation];
