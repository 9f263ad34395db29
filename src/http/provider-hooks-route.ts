import type { FastifyInstance } from 'fastify';
import type { UpstreamCore } from '../services/generations/engine-jobs.ts';

/**
 * `POST /hooks/<provider>`: a provider's webhook, outside /api/v1 (no API key: the provider's
 * signature is the credential, checked over the raw bytes). `POST /hooks/<provider>/<token>`: a
 * provider's unsigned callback, the attempt's token being the credential. A bad signature or token
 * is 401; a good one only asks for a poll now, so duplicates and late events change nothing.
 */
export async function registerProviderHooks(app: FastifyInstance, upstream: Pick<UpstreamCore, 'receiveHook'>): Promise<void> {
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: 1024 * 1024 }, (_req, body, done) => done(null, body));
    scope.post<{ Params: { provider: string } }>('/hooks/:provider', async (request, reply) => {
      const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      const outcome = await upstream.receiveHook(request.params.provider, request.headers, body);
      return reply.send({ received: true, outcome });
    });
    // A provider that calls back unsigned (HeyGen's callback_url): the attempt's token in the path is the credential.
    scope.post<{ Params: { provider: string; token: string } }>('/hooks/:provider/:token', async (request, reply) => {
      const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      const outcome = await upstream.receiveHook(request.params.provider, request.headers, body, request.params.token);
      return reply.send({ received: true, outcome });
    });
  });
}
