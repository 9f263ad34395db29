import type { FastifyInstance } from 'fastify';
import type { AvatarService } from '../../../services/avatars.ts';
import { idempotencyOf, sendOutcome } from './outcome.ts';

export function avatarRoutes(scope: FastifyInstance, avatars: AvatarService): void {
  scope.get('/avatars', () => avatars.listPlatform());
  scope.get('/avatars/custom', (req) => avatars.listCustom(req.principal));
  scope.post('/avatars/custom', async (req, reply) =>
    sendOutcome(reply, await avatars.createCustom(req.principal, req.body, idempotencyOf(req))),
  );
  scope.delete<{ Params: { id: string } }>('/avatars/custom/:id', async (req, reply) => {
    await avatars.removeCustom(req.principal, req.params.id);
    return reply.status(204).send();
  });
}
