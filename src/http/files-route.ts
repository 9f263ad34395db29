import type { FastifyInstance, FastifyReply } from 'fastify';
import { AppError } from '../domain/errors.ts';
import type { LocalStorage } from '../adapters/storage/local.ts';
import type { S3Storage } from '../adapters/storage/s3.ts';
import { contentRange, rangeAnswer, rangeRefusal } from './byte-range.ts';

export interface FileRoutesDeps {
  storage: LocalStorage | S3Storage;
  /** Why a validly signed link names nothing any more, when it can be told (a retention period passed). */
  whyGone?: (key: string) => Promise<string | undefined>;
  /** Only for tests that need to move the clock. */
  now?: () => number;
}

type FilesRequestQuery = Record<string, string | string[] | undefined>;

const singleValue = (value: string | string[] | undefined): string =>
  typeof value === 'string' ? value : '';

const header = (value: string | string[] | undefined): string | undefined => (Array.isArray(value) ? value[0] : value);

/**
 * Serves signed links produced by LocalStorage.signedUrl. The signature is the only credential,
 * so it is checked before the key is ever turned into a path. One byte range is served as asked
 * (players seek, downloads resume); HEAD answers the same headers without the file.
 *
 * With S3 storage the server hands out the bucket's own presigned links, so a /files link can
 * only be one given out while the files were on disk (then copied to the bucket): it still works
 * until it expires, as a redirect to a presigned link that expires when it would have.
 */
export function registerFileRoutes(app: FastifyInstance, deps: FileRoutesDeps): void {
  app.route<{ Params: { '*': string }; Querystring: FilesRequestQuery }>({
    method: ['GET', 'HEAD'],
    url: '/files/*',
    handler: async (request, reply) => {
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
      if (deps.storage.kind === 's3') {
        return reply.header('Cache-Control', 'no-store').redirect(await deps.storage.signedUrl(key, check.secondsLeft), 302);
      }

      const whole = await deps.storage.openStream(key);
      if (!whole) throw new AppError('not_found', (await deps.whyGone?.(key)) ?? 'the file does not exist');
      // As nginx does: the size and the time of writing; a key's file is written once, so this is strong.
      const etag = `"${whole.size.toString(16)}-${Math.floor(whole.modifiedMs).toString(16)}"`;
      reply
        .header('Accept-Ranges', 'bytes')
        .header('ETag', etag)
        .header('Last-Modified', new Date(whole.modifiedMs).toUTCString())
        .header('Cache-Control', `private, max-age=${check.secondsLeft}`)
        .header('X-Content-Type-Options', 'nosniff');

      const answer = rangeAnswer(header(request.headers.range), whole.size, header(request.headers['if-range']), etag);
      if (answer.kind === 'whole') return send(reply.header('Content-Type', whole.contentType), request.method, whole.stream, whole.size);
      whole.stream.destroy();
      if (answer.kind === 'unsatisfiable') {
        return reply.status(416).header('Content-Range', contentRange(whole.size)).send(rangeRefusal(header(request.headers.range), whole.size));
      }
      reply.header('Content-Type', whole.contentType);
      const { start, end } = answer.range;
      reply.status(206).header('Content-Range', contentRange(whole.size, answer.range));
      if (request.method === 'HEAD') return send(reply, 'HEAD', undefined, end - start + 1);
      const part = await deps.storage.openStream(key, answer.range);
      if (!part) throw new AppError('not_found', 'the file does not exist');
      return send(reply, 'GET', part.stream, end - start + 1);
    },
  });
}

function send(reply: FastifyReply, method: string, stream: NodeJS.ReadableStream & { destroy(): void } | undefined, length: number): FastifyReply {
  reply.header('Content-Length', String(length));
  if (method === 'HEAD') {
    stream?.destroy();
    return reply.send();
  }
  return reply.send(stream);
}
