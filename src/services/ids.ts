import { AppError } from '../domain/errors.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const isUuid = (value: unknown): value is string => typeof value === 'string' && UUID.test(value);

/** A path id that cannot be a UUID is a malformed parameter (400), not a missing resource. */
export function requireUuid(value: unknown, field = 'id'): string {
  if (typeof value !== 'string' || !UUID.test(value)) {
    throw new AppError('validation_error', `${field}: must be a UUID`);
  }
  return value.toLowerCase();
}

/** 23503 for a NO ACTION reference, 23001 for ON DELETE RESTRICT: either way the row is still in use. */
export function isForeignKeyViolation(e: unknown): boolean {
  const code = typeof e === 'object' && e !== null ? (e as { code?: unknown }).code : undefined;
  return code === '23503' || code === '23001';
}
