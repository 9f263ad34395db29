import type { z } from 'zod';
import { AppError } from './errors.ts';

/** Parses with a zod schema; the first problem becomes a 400 naming the field. */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown, where = ''): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  throw new AppError('validation_error', describeIssues(result.error.issues, where));
}

export function describeIssues(issues: readonly z.core.$ZodIssue[], where = ''): string {
  const first = issues[0];
  if (!first) return 'invalid request';
  const field = [where, ...first.path.map(String)].filter(Boolean).join('.');
  return field ? `${field}: ${first.message}` : first.message;
}
