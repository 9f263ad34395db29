import type { ByteRange } from '../adapters/storage/storage.ts';

/** What a GET of a file of `size` bytes answers for its Range header. */
export type RangeAnswer = { kind: 'whole' } | { kind: 'part'; range: ByteRange } | { kind: 'unsatisfiable' };

const WHOLE: RangeAnswer = { kind: 'whole' };
const ONE_RANGE = /^bytes=(\d*)-(\d*)$/i;

/**
 * One byte range (`a-b`, `a-`, `-n`) is served as asked; a range wholly past the end (or `-0`) is
 * unsatisfiable. Everything else is answered with the whole file, as RFC 9110 lets a server ignore
 * Range: several ranges (a multipart answer nobody needs for media), malformed headers, other units,
 * an empty file, and an If-Range other than the file's own strong `etag` (a resumed download whose
 * file changed starts over; a date is never matched).
 */
export function rangeAnswer(header: string | undefined, size: number, ifRange?: string, etag?: string): RangeAnswer {
  if (header === undefined || size === 0) return WHOLE;
  if (ifRange !== undefined && (etag === undefined || ifRange.trim() !== etag)) return WHOLE;
  const m = ONE_RANGE.exec(header.trim());
  if (!m) return WHOLE;
  const [, first, last] = m as unknown as [string, string, string];
  if (first === '' && last === '') return WHOLE;
  if (first === '') {
    const suffix = Number(last);
    if (suffix === 0) return { kind: 'unsatisfiable' };
    return { kind: 'part', range: { start: Math.max(0, size - suffix), end: size - 1 } };
  }
  const start = Number(first);
  const end = last === '' ? Infinity : Number(last);
  if (end < start) return WHOLE;
  if (start >= size) return { kind: 'unsatisfiable' };
  return { kind: 'part', range: { start, end: Math.min(end, size - 1) } };
}

/** The Content-Range of a part, or of a 416 (the size alone). */
export const contentRange = (size: number, range?: ByteRange): string => (range ? `bytes ${range.start}-${range.end}/${size}` : `bytes */${size}`);

/** The JSON body of a 416. */
export const rangeRefusal = (header: string | undefined, size: number) => ({
  error: { code: 'validation_error', message: `the range ${header} is past the end of the file (${size} bytes)` },
});
