import type { FastifyInstance } from 'fastify';
import type { AuthService } from '../../../services/auth.ts';
import type { Principal } from '../../../services/context.ts';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal;
  }
}

/** Runs before the body is parsed, so an unauthenticated caller learns nothing about its payload. */
export function requireApiKey(scope: FastifyInstance, auth: AuthService): void {
  scope.decorateRequest('principal', null as unknown as Principal);
  scope.addHook('onRequest', async (request) => {
    request.principal = await auth.authenticate(request.headers.authorization);
  });
}
