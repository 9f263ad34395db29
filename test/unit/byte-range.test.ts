import { describe, expect, it } from 'vitest';
import { rangeAnswer } from '../../src/http/byte-range.ts';

describe('rangeAnswer', () => {
  it('takes one range of bytes, clamped to the end', () => {
    expect(rangeAnswer('bytes=0-9', 100)).toEqual({ kind: 'part', range: { start: 0, end: 9 } });
    expect(rangeAnswer('bytes=90-', 100)).toEqual({ kind: 'part', range: { start: 90, end: 99 } });
    expect(rangeAnswer('bytes=-10', 100)).toEqual({ kind: 'part', range: { start: 90, end: 99 } });
    expect(rangeAnswer('bytes=-1000', 100)).toEqual({ kind: 'part', range: { start: 0, end: 99 } });
    expect(rangeAnswer('bytes=50-99999999999999999999', 100)).toEqual({ kind: 'part', range: { start: 50, end: 99 } });
  });

  it('finds a range wholly past the end, or an empty suffix, unsatisfiable', () => {
    expect(rangeAnswer('bytes=100-', 100)).toEqual({ kind: 'unsatisfiable' });
    expect(rangeAnswer('bytes=99999999999999999999-', 100)).toEqual({ kind: 'unsatisfiable' });
    expect(rangeAnswer('bytes=-0', 100)).toEqual({ kind: 'unsatisfiable' });
  });

  it('serves the range under an If-Range equal to the strong ETag', () => {
    expect(rangeAnswer('bytes=0-9', 100, '"etag"', '"etag"')).toEqual({ kind: 'part', range: { start: 0, end: 9 } });
  });

  it('serves the whole file for anything else', () => {
    for (const h of [undefined, '', 'bytes=', 'bytes=-', 'bytes=5-1', 'bytes=0-1,3-4', 'bytes = 0-1', 'bits=0-1', 'bytes=a-b', 'bytes=1.5-2']) {
      expect(rangeAnswer(h, 100), String(h)).toEqual({ kind: 'whole' });
    }
    expect(rangeAnswer('bytes=0-9', 0)).toEqual({ kind: 'whole' });
    expect(rangeAnswer('bytes=0-9', 100, '"etag"')).toEqual({ kind: 'whole' });
    expect(rangeAnswer('bytes=0-9', 100, 'W/"etag"', '"etag"')).toEqual({ kind: 'whole' });
    expect(rangeAnswer('bytes=0-9', 100, '"other"', '"etag"')).toEqual({ kind: 'whole' });
    expect(rangeAnswer('bytes=0-9', 100, 'Fri, 27 Nov 2026 03:00:00 GMT', '"etag"')).toEqual({ kind: 'whole' });
  });
});
