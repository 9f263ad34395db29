import type { FastifyReply, FastifyRequest } from 'fastify';
import { parseIdempotencyKey, type IdempotencyRequest, type RecordedOutcome } from '../../../services/idempotency.ts';

/** The Idempotency-Key of a POST, scoped to its method and path (DESIGN decision 2). */
export function idempotencyOf(request: FastifyRequest): IdempotencyRequest | undefined {
  const key = parseIdempotencyKey(request.headers['idempotency-key']);
  return key === undefined ? undefined : { key, method: request.method, path: request.url.split('?')[0]! };
}

/** Sends a recorded outcome; a replay says so in `Idempotent-Replayed: true`. */
export function sendOutcome(reply: FastifyReply, outcome: RecordedOutcome, present: (body: any) => unknown = (b) => b) {
  if (outcome.replayed) reply.header('idempotent-replayed', 'true');
  const ok = outcome.status >= 200 && outcome.status < 300;
  return reply.status(outcome.status).send(ok ? present(outcome.body) : outcome.body);
}
