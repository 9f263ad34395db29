import type { GenerationOperation } from '../../../domain/generation-types.ts';
import { builder } from '../builder.ts';
import { principalOf } from '../context.ts';
import { errorTypes } from './errors.ts';
import { GenerationRef } from './generation.ts';
import { idempotencyFor, unwrapOutcome } from './idempotency.ts';

type FieldKind = 'String' | 'String!' | 'ID' | 'ID!' | 'Float' | 'Float!' | 'Int' | 'Int!' | 'Boolean' | '[String!]' | '[String!]!' | '[ID!]';

// The spec's field names, as in REST: one vocabulary for both doors.
const imageShared: Record<string, FieldKind> = {
  model: 'String!',
  effort: 'String',
  fast: 'Boolean',
  aspect_ratio: 'String!',
  quantity: 'Int',
  resolution: 'String',
};

const MUTATIONS: Array<{ name: string; operation: GenerationOperation; input: string; fields: Record<string, FieldKind> }> = [
  {
    name: 'createTalkingAvatarVideo',
    operation: 'talking-avatar',
    input: 'TalkingAvatarInput',
    fields: { avatar_id: 'ID!', avatar_type: 'String!', script: 'String', voice_id: 'String', voiceover_id: 'ID', lipsync_model: 'String' },
  },
  {
    name: 'createAiVideo',
    operation: 'ai-video',
    input: 'AiVideoInput',
    fields: {
      model: 'String!',
      prompt: 'String!',
      aspect_ratio: 'String!',
      duration: 'Float!',
      resolution: 'String',
      quality: 'String',
      reference_image_url: 'String',
      hd: 'Boolean',
      generate_audio: 'Boolean',
      first_frame_image_url: 'String',
      last_frame_image_url: 'String',
      reference_image_urls: '[String!]',
      brand_id: 'ID',
      product_ids: '[ID!]',
    },
  },
  {
    name: 'createSwapAvatarVideo',
    operation: 'swap-avatar',
    input: 'SwapAvatarInput',
    fields: { video_url: 'String!', mode: 'String!', duration: 'Float!', width: 'Int!', height: 'Int!', avatar_id: 'ID', avatar_type: 'String', image_url: 'String' },
  },
  {
    name: 'createLocalizedVideo',
    operation: 'localize',
    input: 'LocalizeInput',
    fields: {
      video_url: 'String!',
      mode: 'String!',
      output_language: 'String!',
      duration: 'Float!',
      width: 'Int!',
      height: 'Int!',
      translate_audio_only: 'Boolean',
      speaker_num: 'Int',
      enable_dynamic_duration: 'Boolean',
    },
  },
  {
    name: 'createVideoEdit',
    operation: 'video-edit',
    input: 'VideoEditInput',
    fields: { template_id: 'String!', video_url: 'String', generation_id: 'ID', language: 'String', auto_approve: 'Boolean' },
  },
  {
    name: 'createTextToImage',
    operation: 'text-to-image',
    input: 'TextToImageInput',
    fields: { ...imageShared, prompt: 'String!', brand_id: 'ID', product_ids: '[ID!]' },
  },
  {
    name: 'createProductShots',
    operation: 'product-shots',
    input: 'ProductShotsInput',
    fields: { ...imageShared, product_id: 'ID!', style_id: 'String!', additional_prompt: 'String' },
  },
  {
    name: 'createImageEdit',
    operation: 'image-edit',
    input: 'ImageEditInput',
    fields: { ...imageShared, prompt: 'String!', reference_image_urls: '[String!]!', brand_id: 'ID', product_ids: '[ID!]' },
  },
];

function inputField(t: any, kind: FieldKind) {
  const required = kind.endsWith('!') && !kind.startsWith('[') ? true : kind === '[String!]!';
  if (kind.startsWith('[')) return t.field({ type: [kind.startsWith('[ID') ? 'ID' : 'String'], required });
  const base = kind.replace('!', '');
  const make = { String: t.string, ID: t.id, Float: t.float, Int: t.int, Boolean: t.boolean }[base] as (o: object) => unknown;
  return make.call(t, { required });
}

interface Created {
  generation_id: string;
  type: string;
  status: string;
}

const CreatedGeneration = builder.objectRef<Created>('CreatedGeneration').implement({
  description: 'The create response of REST, with the generation itself one field away',
  fields: (t) => ({
    generation_id: t.exposeID('generation_id'),
    type: t.exposeString('type'),
    status: t.exposeString('status'),
    generation: t.field({
      type: GenerationRef,
      resolve: (c, _a, ctx) => ctx.app.services.generationReader.get(principalOf(ctx), c.generation_id),
    }),
  }),
});

for (const m of MUTATIONS) {
  const Input = builder.inputType(m.input, {
    fields: (t) => Object.fromEntries(Object.entries(m.fields).map(([k, kind]) => [k, inputField(t, kind)])),
  });
  builder.mutationField(m.name, (t) =>
    t.field({
      type: CreatedGeneration,
      errors: errorTypes,
      args: { input: t.arg({ type: Input, required: true }), idempotencyKey: t.arg.string() },
      resolve: async (_r, { input, idempotencyKey }, ctx) =>
        unwrapOutcome<Created>(
          await ctx.app.services.generationCreator.create(principalOf(ctx), m.operation, input, idempotencyFor(m.name, idempotencyKey)),
        ),
    }),
  );
}
