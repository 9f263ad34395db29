import { AppError } from '../../../domain/errors.ts';
import { parseIdempotencyKey, type IdempotencyRequest, type RecordedOutcome } from '../../../services/idempotency.ts';

/** The REST semantics, scoped to the mutation's name instead of a path. */
export function idempotencyFor(mutation: string, key: string | null | undefined): IdempotencyRequest | undefined {
  const parsed = parseIdempotencyKey(key ?? undefined);
  return parsed === undefined ? undefined : { key: parsed, method: 'POST', path: `graphql:${mutation}` };
}

/** A stored error outcome becomes the same AppError again, so a replay answers like the original. */
export function unwrapOutcome<T>(outcome: RecordedOutcome): T {
  if (outcome.status >= 200 && outcome.status < 300) return outcome.body as T;
  const err = (outcome.body as { error?: { code?: string; message?: string } }).error;
  throw new AppError((err?.code ?? 'internal_error') as AppError['code'], err?.message ?? 'error');
}
