import type { FastifyInstance } from 'fastify';
import type { GenerationOperation } from '../../../domain/generation-types.ts';
import type { GenerationCreator } from '../../../services/generations/create.ts';
import type { GenerationReader } from '../../../services/generations/read.ts';
import type { TemplateService } from '../../../services/templates.ts';
import { idempotencyOf, sendOutcome } from './outcome.ts';

const CREATE_ROUTES: Record<string, GenerationOperation> = {
  '/videos/talking-avatar': 'talking-avatar',
  '/videos/ai-video': 'ai-video',
  '/videos/swap-avatar': 'swap-avatar',
  '/videos/localize': 'localize',
  '/videos/edit': 'video-edit',
  '/images/text-to-image': 'text-to-image',
  '/images/product-shots': 'product-shots',
  '/images/edit': 'image-edit',
};

export function generationRoutes(
  scope: FastifyInstance,
  s: { creator: GenerationCreator; reader: GenerationReader; templates: TemplateService },
): void {
  for (const [path, operation] of Object.entries(CREATE_ROUTES)) {
    scope.post(path, async (req, reply) =>
      sendOutcome(reply, await s.creator.create(req.principal, operation, req.body, idempotencyOf(req))),
    );
  }
  scope.get('/generations', (req) => s.reader.list(req.principal, req.query));
  scope.get<{ Params: { id: string } }>('/generations/:id', (req) => s.reader.get(req.principal, req.params.id));
  scope.get('/styles', (req) => s.templates.listStyles(req.query));
  scope.get('/caption-templates', (req) => s.templates.listCaptionTemplates(req.query));
}
