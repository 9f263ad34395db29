import { GENERATION_OPERATIONS } from '../../../domain/generation-types.ts';
import { pageQuery } from '../../../domain/inputs.ts';
import { GENERATION_OPERATION_TABLE, restDescription, restTag } from '../../../domain/operations.ts';
import { generationListQuery } from '../../../services/generations/read.ts';
import { idempotencyOf, sendOutcome } from './outcome.ts';
import { captionTemplateSchema, generationCreated, generationSchema, generationSummarySchema, idParams, page, styleSchema } from './responses.ts';
import { routeUsing } from './route.ts';

const route = routeUsing('generationCreator', 'generationReader', 'generationCanceller', 'generationDeleter', 'templates');

export const generationRoutes = [
  // The create endpoints, one per entry of the operation table (their quotes mirror them under /quotes).
  ...GENERATION_OPERATIONS.map((operation) => {
    const c = GENERATION_OPERATION_TABLE[operation];
    return route({
      method: 'POST',
      path: c.path,
      operationId: c.operationId,
      tag: restTag(c),
      summary: c.openapi.summary,
      description: restDescription(c),
      example: c.openapi.example,
      body: c.schema,
      idempotent: true,
      responses: { 202: { description: 'Accepted and charged', schema: generationCreated } },
      errors: ['validation_error', 'insufficient_credits', 'not_found', 'conflict'],
      handler: async (s, req, reply) => sendOutcome(reply, await s.generationCreator.create(req.principal, operation, req.body, idempotencyOf(req))),
    });
  }),
  route({
    method: 'GET',
    path: '/generations',
    operationId: 'listGenerations',
    tag: 'Generations',
    summary: "List the team's generations, newest first",
    query: generationListQuery,
    responses: { 200: { description: 'A page of generations', schema: page(generationSummarySchema) } },
    errors: ['validation_error'],
    handler: (s, req) => s.generationReader.list(req.principal, req.query),
  }),
  route({
    method: 'GET',
    path: '/generations/:id',
    operationId: 'getGeneration',
    tag: 'Generations',
    summary: 'One generation (for polling): each read signs fresh result links',
    params: idParams,
    responses: { 200: { description: 'The generation with its details', schema: generationSchema } },
    errors: ['validation_error', 'not_found'],
    handler: (s, req) => s.generationReader.get(req.principal, req.params.id),
  }),
  route({
    method: 'POST',
    path: '/generations/:id/cancel',
    operationId: 'cancelGeneration',
    tag: 'Generations',
    summary: 'Cancel a processing generation: it fails with error `cancelled` and is refunded',
    description:
      'The generation becomes `failed` with `error: "cancelled"` and its credits are refunded in the same transaction; the `generation.failed` webhook is sent once. Its work stops (a local render is killed; a provider job is cancelled where the provider allows, otherwise its late result is discarded). Cancelling it again answers the same; a generation that ended otherwise is 409.',
    params: idParams,
    responses: { 200: { description: 'The cancelled generation', schema: generationSchema } },
    errors: ['validation_error', 'not_found', 'conflict'],
    handler: (s, req) => s.generationCanceller.cancel(req.principal, req.params.id),
  }),
  route({
    method: 'DELETE',
    path: '/generations/:id',
    operationId: 'deleteGeneration',
    tag: 'Generations',
    summary: 'Delete a generation that has ended, with its files',
    description:
      'Deletes the generation, its output files and the input copies kept for it alone, its webhook delivery records and its links to products and avatars (those can then be deleted). The credit ledger keeps its lines, which still name the generation. A generation still `processing` is 409: cancel it first (`POST /generations/{id}/cancel`). Under an `Idempotency-Key` a repeat answers the first answer (204), not 404.',
    params: idParams,
    idempotent: true,
    responses: { 204: { description: 'Deleted' } },
    errors: ['validation_error', 'not_found', 'conflict'],
    handler: async (s, req, reply) => sendOutcome(reply, await s.generationDeleter.remove(req.principal, req.params.id, idempotencyOf(req))),
  }),
  route({
    method: 'GET',
    path: '/styles',
    operationId: 'listStyles',
    tag: 'Catalogues',
    summary: 'Styles for product shots',
    query: pageQuery,
    responses: { 200: { description: 'A page of styles', schema: page(styleSchema) } },
    errors: ['validation_error'],
    handler: (s, req) => s.templates.listStyles(req.query),
  }),
  route({
    method: 'GET',
    path: '/caption-templates',
    operationId: 'listCaptionTemplates',
    tag: 'Catalogues',
    summary: 'Caption templates for video edits',
    query: pageQuery,
    responses: { 200: { description: 'A page of caption templates', schema: page(captionTemplateSchema) } },
    errors: ['validation_error'],
    handler: (s, req) => s.templates.listCaptionTemplates(req.query),
  }),
];
