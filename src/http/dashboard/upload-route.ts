import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Config } from '../../config.ts';
import type { Services } from '../../service-factories.ts';
import { REQUEST_COST } from '../../domain/rate-limit.ts';
import type { Principal } from '../../services/principal.ts';
import { idempotencyOf, sendOutcome } from '../rest/v1/outcome.ts';
import { answerEarly, leaveBodiesUnread, MULTIPART_OVERHEAD, uploadBodyOf } from '../upload-body.ts';
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
    leaveBodiesUnread(scope);
    scope.addHook('onRequest', async (request, reply) => {
      requireSameOrigin(request);
      const session = await services.sessions.requireSession(sessionSecretOf(request.headers.cookie), header(request, 'x-csrf-token'));
      const { headers, refusal } = await services.rateLimiter.draw(`user:${session.userId}`, rateLimits[session.tier], REQUEST_COST.write);
      if (refusal) throw refusal;
      reply.headers(headers);
      request.uploader = { teamId: session.teamId, keyId: null, userId: session.userId, client: { ip: request.ip, user_agent: header(request, 'user-agent') ?? null } };
    });
    scope.post('/auth/uploads', async (request, reply) =>
      answerEarly(request, reply, async () =>
        sendOutcome(reply, await services.uploads.create(request.uploader, uploadBodyOf(request, services.uploads.maxBytes + MULTIPART_OVERHEAD), idempotencyOf(request))),
      ),
    );
  });
}

function header(request: FastifyRequest, name: string): string | undefined {
  const v = request.headers[name];
  return Array.isArray(v) ? v[0] : v;
}
