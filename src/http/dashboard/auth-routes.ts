import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { SESSION_MAX_MS } from '../../domain/dashboard-users.ts';
import { AppError } from '../../domain/errors.ts';
import type { OpenedSession, SessionService } from '../../services/sessions.ts';
import { sessionSecretOf, setSessionCookie as setCookie } from './session-cookie.ts';

const SMALL_BODY = 16 * 1024;

const opened = (reply: FastifyReply, s: OpenedSession) => {
  setCookie(reply, s.secret, Math.floor(SESSION_MAX_MS / 1000));
  return reply.header('cache-control', 'no-store').send({ user: s.user, team: s.team, csrf_token: s.csrf_token });
};

/**
 * A request that opens a session comes from our own pages: a browser says where a request comes
 * from (Origin, Sec-Fetch-Site), and only JSON bodies are read, which a form of another site cannot send.
 */
export function requireSameOrigin(request: FastifyRequest): void {
  const site = request.headers['sec-fetch-site'];
  const origin = request.headers.origin;
  const host = request.headers.host;
  const crossSite = (site !== undefined && site !== 'same-origin' && site !== 'none') || (origin !== undefined && origin !== `https://${host}`);
  if (crossSite) throw new AppError('forbidden', 'Cross-site request refused');
}

/** The dashboard's session door (DESIGN decision 17); the API's key door never reads these cookies. */
export function registerAuthRoutes(fastify: FastifyInstance, sessions: SessionService): void {
  function requireSession(request: FastifyRequest) {
    requireSameOrigin(request);
    return sessions.requireSession(sessionSecretOf(request.headers.cookie), header(request, 'x-csrf-token'));
  }

  fastify.post('/auth/sign-in', { bodyLimit: SMALL_BODY }, async (request, reply) => {
    requireSameOrigin(request);
    return opened(reply, await sessions.signIn(request.body, request.ip, request.headers['user-agent']));
  });

  fastify.post('/auth/welcome', { bodyLimit: SMALL_BODY }, async (request, reply) => {
    requireSameOrigin(request);
    return opened(reply, await sessions.followLink(request.body, request.ip, request.headers['user-agent']));
  });

  fastify.get('/auth/session', async (request, reply) => {
    const session = await sessions.authenticate(sessionSecretOf(request.headers.cookie));
    if (!session) throw new AppError('unauthorized', 'Not signed in');
    return reply.header('cache-control', 'no-store').send(session.view);
  });

  fastify.post('/auth/sign-out', { bodyLimit: SMALL_BODY }, async (request, reply) => {
    const session = await requireSession(request);
    await sessions.signOut(session.secret, { teamId: session.teamId, userId: session.userId, client: clientOf(request) });
    return setCookie(reply, '', 0).status(204).send();
  });

  fastify.post('/auth/sign-out-everywhere', { bodyLimit: SMALL_BODY }, async (request, reply) => {
    const session = await requireSession(request);
    const ended = await sessions.signOutEverywhere(session.userId, { teamId: session.teamId, client: clientOf(request) });
    return setCookie(reply, '', 0).send({ sessions_ended: ended });
  });
}

/** The client as Fastify names it (TRUST_PROXY), for the audit log. */
const clientOf = (request: FastifyRequest) => ({ ip: request.ip, user_agent: header(request, 'user-agent') ?? null });

function header(request: FastifyRequest, name: string): string | undefined {
  const v = request.headers[name];
  return Array.isArray(v) ? v[0] : v;
}
