import type { GenerationOperation } from '../../../domain/generation-types.ts';
import { OPERATIONS } from '../../../services/generations/operations.ts';
import { builder } from '../builder.ts';
import { principalOf } from '../context.ts';
import { errorTypes } from './errors.ts';
import { GenerationRef } from './generation.ts';
import { idempotencyFor, unwrapOutcome } from './idempotency.ts';
import { quoteField } from './quote.ts';
import { enumNamesAcross, inputTypeFromZod } from './zod-inputs.ts';

const MUTATIONS: ReadonlyArray<{ name: string; operation: GenerationOperation; input: string }> = [
  { name: 'createTalkingAvatarVideo', operation: 'talking-avatar', input: 'TalkingAvatarInput' },
  { name: 'createAiVideo', operation: 'ai-video', input: 'AiVideoInput' },
  { name: 'createSwapAvatarVideo', operation: 'swap-avatar', input: 'SwapAvatarInput' },
  { name: 'createLocalizedVideo', operation: 'localize', input: 'LocalizeInput' },
  { name: 'createVideoEdit', operation: 'video-edit', input: 'VideoEditInput' },
  { name: 'createTextToImage', operation: 'text-to-image', input: 'TextToImageInput' },
  { name: 'createProductShots', operation: 'product-shots', input: 'ProductShotsInput' },
  { name: 'createImageEdit', operation: 'image-edit', input: 'ImageEditInput' },
];

// The inputs are the REST request schemas themselves (the spec's field names: one vocabulary for
// both doors), so a field added to an endpoint appears here too.
const enumNames = enumNamesAcross(MUTATIONS.map((m) => ({ name: m.input, schema: OPERATIONS[m.operation].schema })));

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
  const Input = inputTypeFromZod(m.input, OPERATIONS[m.operation].schema, { enumName: enumNames(m.input) });
  quoteField(m.name.replace(/^create/, 'quote'), m.operation, Input);
  builder.mutationField(m.name, (t) =>
    t.field({
      type: CreatedGeneration,
      errors: errorTypes,
      args: { input: t.arg({ type: Input as never, required: true }), idempotencyKey: t.arg.string() },
      resolve: async (_r, { input, idempotencyKey }, ctx) =>
        unwrapOutcome<Created>(
          await ctx.app.services.generationCreator.create(principalOf(ctx), m.operation, input, idempotencyFor(m.name, idempotencyKey)),
        ),
    }),
  );
}

builder.mutationField('cancelGeneration', (t) =>
  t.field({
    type: GenerationRef,
    errors: errorTypes,
    description: 'A processing generation fails with error "cancelled" and is refunded (the same as POST /generations/{id}/cancel)',
    args: { id: t.arg.id({ required: true }) },
    resolve: (_r, { id }, ctx) => ctx.app.services.generationCanceller.cancel(principalOf(ctx), String(id)),
  }),
);
