/**
 * Pure figures the benches print: percentiles of a sample and the busiest stretch of a series of
 * event times. No I/O here, so they are unit-tested (test/unit/bench-stats.test.ts).
 */

/** The p-quantile (0..1) of values sorted ascending, nearest rank; NaN when there are none. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!;
}

/** The values sorted ascending, as a new array (the input is left alone). */
export function sortedCopy(values: Iterable<number>): Float64Array {
  return Float64Array.from(values).sort();
}

/**
 * The most events that fall in any window of `windowMs` (a window [t, t + windowMs) may start
 * anywhere, not only on a second's boundary): what a provider's "N requests per second" counts.
 * `times` are in ms and sorted ascending.
 */
export function maxInWindow(times: ArrayLike<number>, windowMs: number): number {
  let best = 0;
  let start = 0;
  for (let end = 0; end < times.length; end++) {
    while (times[end]! - times[start]! >= windowMs) start++;
    best = Math.max(best, end - start + 1);
  }
  return best;
}

/** How many of the sorted `times` fall in [from, to). */
export function countBetween(times: ArrayLike<number>, from: number, to: number): number {
  let n = 0;
  for (let i = 0; i < times.length; i++) if (times[i]! >= from && times[i]! < to) n++;
  return n;
}
