import type { EngineProgress } from './engine-contract.ts';

/**
 * The words of a job's stage, the same for every engine, so that a dashboard reads one vocabulary
 * whichever provider runs the job. Fractions are clamped to 0..1; a value that is not a finite
 * number is left out (the stage alone is shown).
 */

export function fractionOf(value: unknown, whole = 1): number | undefined {
  if (typeof value !== 'number' || !Number.isFinite(value) || !(whole > 0)) return undefined;
  return Math.min(1, Math.max(0, value / whole));
}

/** Waiting in the provider's queue; `position` counts from 0 for the next job to run (fal's `queue_position`), shown from 1. */
export function queued(position?: unknown): EngineProgress {
  if (typeof position === 'number' && Number.isInteger(position) && position >= 0) return { stage: `queued at position ${position + 1}`, fraction: 0 };
  return { stage: 'queued', fraction: 0 };
}

/** Running, with the engine's own words where it gives some (a log line, a state) and its fraction where it can say. */
export function running(detail?: string, fraction?: number): EngineProgress {
  const words = detail?.replace(/\s+/g, ' ').trim().slice(0, 160);
  return { stage: words ? `running: ${words}` : 'running', ...(fraction === undefined ? {} : { fraction }) };
}

/** Step `k` of `n` (a sampler's steps, a renderer's images): "running step 12 of 30", its fraction k/n. */
export function step(k: number, n: number, what = 'running step'): EngineProgress {
  const whole = Math.max(1, Math.floor(n));
  const done = Math.min(whole, Math.max(0, Math.floor(k)));
  return { stage: `${what} ${done} of ${whole}`, fraction: done / whole };
}

/** A stage named by the engine or the core ("rendering", "encoding", "copying the result"), with its fraction where known. */
export function stage(words: string, fraction?: number): EngineProgress {
  return { stage: words, ...(fraction === undefined ? {} : { fraction: fractionOf(fraction) ?? 0 }) };
}
