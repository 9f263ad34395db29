import type { z } from 'zod';
import { AppError } from './errors.ts';

/**
 * Parses with a zod schema; the first problem becomes a 400 naming the field. Every string of the
 * input is checked first (see malformedString): the one rule for text, whatever the schema.
 */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown, where = ''): z.output<S> {
  const bad = malformedString(input);
  if (bad) throw new AppError('validation_error', describeMalformed(bad, where));
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

export const MALFORMED_TEXT = 'must not contain NUL characters or unpaired UTF-16 surrogates';

/**
 * The path of the first string (a value or a key) that PostgreSQL cannot store as text or JSON:
 * one holding NUL, or a lone UTF-16 surrogate that has no UTF-8 form. Checked before any schema,
 * so such input is a 400 naming the field, never a failed insert.
 */
export function malformedString(value: unknown): (string | number)[] | undefined {
  // One path, pushed and popped as the walk goes: every parse of every request runs this.
  const path: (string | number)[] = [];
  const walk = (v: unknown): boolean => {
    if (typeof v === 'string') return !isStorableText(v);
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        path.push(i);
        if (walk(v[i])) return true;
        path.pop();
      }
      return false;
    }
    if (v && typeof v === 'object') {
      for (const [k, item] of Object.entries(v)) {
        if (!isStorableText(k)) {
          path.push(JSON.stringify(k).slice(1, -1));
          return true;
        }
        path.push(k);
        if (walk(item)) return true;
        path.pop();
      }
    }
    return false;
  };
  return walk(value) ? path : undefined;
}

export const isStorableText = (s: string): boolean => !s.includes('\u0000') && s.isWellFormed();

export function describeMalformed(path: readonly (string | number)[], where = ''): string {
  const field = [where, ...path.map(String)].filter(Boolean).join('.');
  return field ? `${field}: ${MALFORMED_TEXT}` : `the input ${MALFORMED_TEXT}`;
}
