import type { GenerationOperation } from '../../../domain/generation-types.ts';
import { pageQuery } from '../../../domain/inputs.ts';
import { OPERATIONS } from '../../../services/generations/operations.ts';
import { generationListQuery } from '../../../services/generations/read.ts';
import { idempotencyOf, sendOutcome } from './outcome.ts';
import { captionTemplateSchema, generationCreated, generationSchema, generationSummarySchema, idParams, page, styleSchema } from './responses.ts';
import { route } from './route.ts';

/** The create endpoints of generations (their quotes mirror them under /quotes). */
export const CREATES: { path: string; operation: GenerationOperation; operationId: string; tag: string; summary: string }[] = [
  { path: '/videos/talking-avatar', operation: 'talking-avatar', operationId: 'createTalkingAvatar', tag: 'Videos', summary: 'An avatar speaks a script or a voiceover' },
  { path: '/videos/ai-video', operation: 'ai-video', operationId: 'createAiVideo', tag: 'Videos', summary: 'A video from a prompt (the model table decides ratios, durations and options)' },
  { path: '/videos/swap-avatar', operation: 'swap-avatar', operationId: 'createSwapAvatar', tag: 'Videos', summary: "Swap the person in a video for an avatar" },
  { path: '/videos/localize', operation: 'localize', operationId: 'createLocalize', tag: 'Videos', summary: 'Dub a video into another language' },
  { path: '/videos/edit', operation: 'video-edit', operationId: 'createVideoEdit', tag: 'Videos', summary: 'Caption a video with a template' },
  { path: '/images/text-to-image', operation: 'text-to-image', operationId: 'createTextToImage', tag: 'Images', summary: 'Images from a prompt' },
  { path: '/images/product-shots', operation: 'product-shots', operationId: 'createProductShots', tag: 'Images', summary: 'Product shots in a style' },
  { path: '/images/edit', operation: 'image-edit', operationId: 'createImageEdit', tag: 'Images', summary: 'Edit images from references' },
];

export const generationRoutes = [
  ...CREATES.map((c) =>
    route({
      method: 'POST',
      path: c.path,
      operationId: c.operationId,
      tag: c.tag,
      summary: c.summary,
      description: 'Asynchronous: answers at once with `status: processing`; poll `GET /generations/{id}` or wait for the webhook.',
      body: OPERATIONS[c.operation].schema,
      idempotent: true,
      responses: { 202: { description: 'Accepted and charged', schema: generationCreated } },
      errors: ['validation_error', 'insufficient_credits', 'not_found', 'conflict'],
      handler: async (s, req, reply) => sendOutcome(reply, await s.generationCreator.create(req.principal, c.operation, req.body, idempotencyOf(req))),
    }),
  ),
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
