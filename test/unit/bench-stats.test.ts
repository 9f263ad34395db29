import { describe, expect, it } from 'vitest';
import { countBetween, maxInWindow, percentile, sortedCopy } from '../../bench/support/stats.ts';

describe('bench figures', () => {
  it('percentile is the nearest rank of the sorted values', () => {
    const v = sortedCopy([5, 1, 4, 2, 3, 10, 9, 8, 7, 6]);
    expect(percentile(v, 0.5)).toBe(5);
    expect(percentile(v, 0.99)).toBe(10);
    expect(percentile(v, 0)).toBe(1);
    expect(percentile(sortedCopy([42]), 0.99)).toBe(42);
    expect(percentile(new Float64Array(0), 0.5)).toBeNaN();
  });

  it('sortedCopy leaves its input alone', () => {
    const input = [3, 1, 2];
    expect([...sortedCopy(input)]).toEqual([1, 2, 3]);
    expect(input).toEqual([3, 1, 2]);
  });

  it('maxInWindow finds the busiest window wherever it starts, not only on second boundaries', () => {
    // Three events straddling a second boundary (900, 1000, 1100 ms) fit one 1 s window.
    expect(maxInWindow([0, 900, 1000, 1100, 2500], 1000)).toBe(3);
    // A window is half-open: events exactly 1000 ms apart are never in the same one.
    expect(maxInWindow([0, 1000, 2000], 1000)).toBe(1);
    expect(maxInWindow([5, 5, 5, 5], 1000)).toBe(4);
    expect(maxInWindow([], 1000)).toBe(0);
  });

  it('countBetween counts the half-open range', () => {
    expect(countBetween([0, 1, 2, 3, 4], 1, 3)).toBe(2);
    expect(countBetween([0, 1, 2], 5, 9)).toBe(0);
  });
});
