import { z } from 'zod';
import { customAvatarCreate } from '../../../domain/inputs.ts';
import { idempotencyOf, sendOutcome } from './outcome.ts';
import { customAvatarSchema, idParams, platformAvatarSchema } from './responses.ts';
import { routeUsing } from './route.ts';

const route = routeUsing('avatars');

const tag = 'Avatars';

export const avatarRoutes = [
  route({
    method: 'GET',
    path: '/avatars',
    operationId: 'listAvatars',
    tag,
    summary: 'Platform avatars',
    responses: { 200: { description: 'Every platform avatar', schema: z.object({ data: z.array(platformAvatarSchema) }) } },
    errors: [],
    handler: (s) => s.avatars.listPlatform(),
  }),
  route({
    method: 'GET',
    path: '/avatars/custom',
    operationId: 'listCustomAvatars',
    tag,
    summary: "The team's custom avatars",
    responses: { 200: { description: "Every custom avatar of the team", schema: z.object({ data: z.array(customAvatarSchema) }) } },
    errors: [],
    handler: (s, req) => s.avatars.listCustom(req.principal),
  }),
  route({
    method: 'POST',
    path: '/avatars/custom',
    operationId: 'createCustomAvatar',
    tag,
    summary: 'Create a custom avatar from a face image',
    description: 'A public URL of a valid face image, at most 10 MB.',
    body: customAvatarCreate,
    idempotent: true,
    responses: { 201: { description: 'The avatar', schema: customAvatarSchema } },
    errors: ['validation_error', 'conflict'],
    handler: async (s, req, reply) => sendOutcome(reply, await s.avatars.createCustom(req.principal, req.body, idempotencyOf(req))),
  }),
  route({
    method: 'DELETE',
    path: '/avatars/custom/:id',
    operationId: 'deleteCustomAvatar',
    tag,
    summary: 'Delete a custom avatar',
    params: idParams,
    responses: { 204: { description: 'Deleted' } },
    errors: ['validation_error', 'not_found', 'conflict'],
    handler: async (s, req, reply) => {
      await s.avatars.removeCustom(req.principal, req.params.id);
      return reply.status(204).send();
    },
  }),
];
