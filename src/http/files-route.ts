import type { FastifyInstance } from 'fastify';
import { AppError } from '../domain/errors.ts';
import type { LocalStorage } from '../adapters/storage/local.ts';

export interface FileRoutesDeps {
  storage: LocalStorage;
  /** Why a validly signed link names nothing any more, when it can be told (a retention period passed). */
  whyGone?: (key: string) => Promise<string | undefined>;
  /** Only for tests that need to move the clock. */
  now?: () => number;
}

type FilesRequestQuery = Record<string, string | string[] | undefined>;

const singleValue = (value: string | string[] | undefined): string =>
  typeof value === 'string' ? value : '';

/**
 * Serves signed links produced by LocalStorage.signedUrl. The signature is the only credential,
 * so it is checked before the key is ever turned into a path.
 */
export function registerFileRoutes(app: FastifyInstance, deps: FileRoutesDeps): void {
  app.get<{ Params: { '*': string }; Querystring: FilesRequestQuery }>('/files/*', async (request, reply) => {
    const key = request.params['*'];
    const check = deps.storage.verifyLink(
      key,
      singleValue(request.query.expires),
      singleValue(request.query.signature),
      deps.now?.(),
    );
    if (!check.ok) {
      throw new AppError(
        'forbidden',
        check.reason === 'expired' ? 'the link has expired' : 'the link signature is invalid',
      );
    }

    const file = await deps.storage.openStream(key);
    if (!file) throw new AppError('not_found', (await deps.whyGone?.(key)) ?? 'the file does not exist');

    return reply
      .header('Content-Type', file.contentType)
      .header('Content-Length', String(file.size))
      .header('Cache-Control', `private, max-age=${check.secondsLeft}`)
      .header('X-Content-Type-Options', 'nosniff')
      .send(file.stream);
  });
}
