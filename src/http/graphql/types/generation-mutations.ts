import { GENERATION_OPERATIONS } from '../../../domain/generation-types.ts';
import { GENERATION_OPERATION_TABLE, graphqlQuoteName } from '../../../domain/operations.ts';
import { builder } from '../builder.ts';
import { Deleted } from './product.ts';
import { principalOf, servicesFor } from '../request-context.ts';
import { errorTypes } from './errors.ts';
import type { GenerationsDeleted } from '../../../services/generations/delete.ts';
import { GenerationRef, GenerationStatusEnum, GenerationTypeFilter } from './generation.ts';
import { idempotencyFor, unwrapOutcome } from './idempotency.ts';
import { quoteField } from './quote.ts';
import { enumNamesAcross, inputTypeFromZod } from './zod-inputs.ts';

const services = servicesFor('generationReader', 'generationCreator', 'generationCanceller', 'generationDeleter');

// One mutation per entry of the operation table, named there.
const MUTATIONS = GENERATION_OPERATIONS.map((operation) => {
  const e = GENERATION_OPERATION_TABLE[operation];
  return { name: e.graphql.mutation, operation, input: e.graphql.input, quote: graphqlQuoteName(e), schema: e.schema };
});

// The inputs are the REST request schemas themselves (the spec's field names: one vocabulary for
// both doors), so a field added to an endpoint appears here too.
const enumNames = enumNamesAcross(MUTATIONS.map((m) => ({ name: m.input, schema: m.schema })));

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
      resolve: (c, _a, ctx) => services(ctx).generationReader.get(principalOf(ctx), c.generation_id),
    }),
  }),
});

for (const m of MUTATIONS) {
  const Input = inputTypeFromZod(m.input, m.schema, { enumName: enumNames(m.input) });
  quoteField(m.quote, m.operation, Input);
  builder.mutationField(m.name, (t) =>
    t.field({
      type: CreatedGeneration,
      errors: errorTypes,
      args: { input: t.arg({ type: Input as never, required: true }), idempotencyKey: t.arg.string() },
      resolve: async (_r, { input, idempotencyKey }, ctx) =>
        unwrapOutcome<Created>(
          await services(ctx).generationCreator.create(principalOf(ctx), m.operation, input, idempotencyFor(m.name, idempotencyKey)),
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
    resolve: (_r, { id }, ctx) => services(ctx).generationCanceller.cancel(principalOf(ctx), String(id)),
  }),
);

builder.mutationField('deleteGeneration', (t) =>
  t.field({
    type: Deleted,
    errors: errorTypes,
    description:
      'Deletes a generation that has ended, with its files (the same as DELETE /generations/{id}); a processing one is a conflict: cancel it first. The ledger keeps its lines.',
    args: { id: t.arg.id({ required: true }), idempotencyKey: t.arg.string() },
    resolve: async (_r, { id, idempotencyKey }, ctx) => {
      unwrapOutcome(await services(ctx).generationDeleter.remove(principalOf(ctx), String(id), idempotencyFor('deleteGeneration', idempotencyKey)));
      return { id: String(id).toLowerCase() };
    },
  }),
);

const GenerationDeleteFilter = builder.inputType('GenerationDeleteFilter', {
  description: 'Which generations to delete: all of them match when nothing is set',
  fields: (t) => ({
    type: t.field({ type: GenerationTypeFilter }),
    status: t.field({ type: GenerationStatusEnum, description: 'processing matches only what is skipped' }),
    created_before: t.field({ type: 'DateTime', description: 'Created strictly before this instant' }),
  }),
});

const GenerationsDeletedRef = builder.objectRef<GenerationsDeleted>('GenerationsDeleted').implement({
  fields: (t) => ({
    deleted: t.exposeInt('deleted'),
    skipped: t.exposeInt('skipped', { description: 'Named or matched but not deleted: still processing (cancel it first), or the source of a video edit still processing' }),
    not_found: t.exposeInt('not_found', { description: "Named ids that are not the team's generations" }),
    has_more: t.exposeBoolean('has_more', { description: 'A filter matched more than one call deletes (1,000): call again' }),
  }),
});

builder.mutationField('deleteGenerations', (t) =>
  t.field({
    type: GenerationsDeletedRef,
    errors: errorTypes,
    description: 'Deletes many generations of the team: either `ids` (at most 100) or a `filter`. Processing ones are never deleted: they are skipped and counted.',
    args: { ids: t.arg.idList(), filter: t.arg({ type: GenerationDeleteFilter }) },
    resolve: (_r, { ids, filter }, ctx) =>
      services(ctx).generationDeleter.removeMany(principalOf(ctx), {
        ...(ids ? { ids: ids.map(String) } : {}),
        ...(filter
          ? {
              filter: {
                ...(filter.type ? { type: filter.type } : {}),
                ...(filter.status ? { status: filter.status } : {}),
                ...(filter.created_before ? { created_before: filter.created_before } : {}),
              },
            }
          : {}),
      }),
  }),
);
