import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Config } from '../../config.ts';
import type { Services } from '../../service-factories.ts';
import { REQUEST_COST } from '../../domain/rate-limit.ts';
import type { Principal } from '../../services/principal.ts';
import { idempotencyOf, sendOutcome } from '../rest/v1/outcome.ts';
import { MULTIPART_OVERHEAD, uploadBytesOf } from '../rest/v1/uploads.ts';
import { requireSameOrigin } from './auth-routes.ts';
import { sessionSecretOf } from './session-cookie.ts';

declare module 'fastify' {
  interface FastifyRequest {
    uploader: Principal;
  }
}

/**
 * The dashboard's file drop: POST /auth/uploads, the bytes as the body or the one file of a
 * multipart form, answered as POST /api/v1/uploads answers (the same upload service). Held like
 * every other write of a session: our own origin (Origin, Sec-Fetch-Site), the session cookie and
 * its CSRF token, checked before the body is read; the person's rate bucket pays for it.
 * Members and owners alike: an upload belongs to the team.
 */
/** What the route calls: the session check, the person's rate bucket and the upload service. */
type UploadRouteNeeds = { services: Pick<Services, 'sessions' | 'rateLimiter' | 'uploads'>; rateLimits: Config['rateLimits'] };

export async function registerDashboardUploads(fastify: FastifyInstance, { services, rateLimits }: UploadRouteNeeds): Promise<void> {
  await fastify.register(async (scope) => {
    scope.decorateRequest('uploader', null as unknown as Principal);
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, bytes, done) => done(null, bytes));
    scope.addHook('onRequest', async (request, reply) => {
      requireSameOrigin(request);
      const session = await services.sessions.requireSession(sessionSecretOf(request.headers.cookie), header(request, 'x-csrf-token'));
      const { headers, refusal } = await services.rateLimiter.draw(`user:${session.userId}`, rateLimits[session.tier], REQUEST_COST.write);
      if (refusal) throw refusal;
      reply.headers(headers);
      request.uploader = { teamId: session.teamId, keyId: null, userId: session.userId, client: { ip: request.ip, user_agent: header(request, 'user-agent') ?? null } };
    });
    scope.post('/auth/uploads', { bodyLimit: services.uploads.maxBytes + MULTIPART_OVERHEAD }, async (request, reply) =>
      sendOutcome(reply, await services.uploads.create(request.uploader, await uploadBytesOf(request), idempotencyOf(request))),
    );
  });
}

function header(request: FastifyRequest, name: string): string | undefined {
  const v = request.headers[name];
  return Array.isArray(v) ? v[0] : v;
}
