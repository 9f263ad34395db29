import type { FastifyInstance } from 'fastify';
import { AppError } from '../domain/errors.ts';

// Fields that mean one thing only once: Node keeps the first Authorization and joins the rest with
// ", ", so a doubled one would be read silently one way or another. Refused instead.
const ONCE = new Map(['authorization', 'content-type', 'idempotency-key', 'host', 'x-csrf-token'].map((h) => [h, h.replace(/(^|-)\w/g, (c) => c.toUpperCase())]));

/** A request that sends a single-valued header twice is answered 400 before anything reads it. */
export function refuseDoubledHeaders(fastify: FastifyInstance): void {
  fastify.addHook('onRequest', async (request) => {
    const raw = request.raw.rawHeaders;
    if (raw.length <= 2) return;
    const seen = new Set<string>();
    for (let i = 0; i < raw.length; i += 2) {
      const name = raw[i]!.toLowerCase();
      if (!ONCE.has(name)) continue;
      if (seen.has(name)) throw new AppError('validation_error', `the ${ONCE.get(name)} header must be sent once`);
      seen.add(name);
    }
  });
}
