import type { FastifyInstance } from 'fastify';
import { REQUEST_COST } from '../../../domain/rate-limit.ts';
import type { AuthService } from '../../../services/auth.ts';
import type { KeyPrincipal } from '../../../services/principal.ts';
import type { RateLimiter } from '../../../services/rate-limiter.ts';

declare module 'fastify' {
  interface FastifyRequest {
    principal: KeyPrincipal;
  }
}

/**
 * Runs before the body is parsed, so an unauthenticated caller learns nothing about its payload
 * and a refused one (429) costs nothing: the key's token bucket is drawn from here, by the route's
 * cost, and every answer says where the bucket stands (RateLimit-*).
 */
export function requireApiKey(scope: FastifyInstance, auth: AuthService, limiter: RateLimiter): void {
  scope.decorateRequest('principal', null as unknown as KeyPrincipal);
  scope.addHook('onRequest', async (request, reply) => {
    const { principal, rate } = await auth.authorize(request.headers.authorization);
    request.principal = principal;
    const cost = (request.routeOptions.config as { cost?: number } | undefined)?.cost ?? REQUEST_COST.read;
    const { headers, refusal } = await limiter.draw(principal.keyId, rate, cost);
    if (refusal) throw refusal;
    reply.headers(headers);
  });
}
