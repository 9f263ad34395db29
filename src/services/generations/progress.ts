import type { EngineProgress } from '../../adapters/engines/engine-contract.ts';
import { writeGenerationProgress } from '../../repositories/generations.ts';
import type { Deps } from '../deps.ts';

/** The least time between two writes of one generation's progress: a few change events a second at most. */
export const PROGRESS_GAP_MS = 250;

/** The core's own stage while it copies a provider's (or the local engine's) files into storage: the engine's work is done. */
export const COPYING: EngineProgress = { stage: 'copying the result', fraction: 0.95 };

/** What is stored: the fraction clamped to 0..1 (null when the engine gave none), the stage trimmed to one line. */
export function storedProgress(p: EngineProgress): { progress: number | null; stage: string } {
  const f = typeof p.fraction === 'number' && Number.isFinite(p.fraction) ? Math.min(1, Math.max(0, p.fraction)) : null;
  // Stored as a 4-byte real: rounded so that a repeat of the same value is seen as no change.
  return { progress: f === null ? null : Math.round(f * 10_000) / 10_000, stage: p.stage.replace(/\s+/g, ' ').trim().slice(0, 200) || 'running' };
}

interface Slot {
  /** When the last write of this process began. */
  last: number;
  pending?: EngineProgress;
  timer?: NodeJS.Timeout;
  /** Writes of one generation run one after the other, in report order. */
  chain: Promise<void>;
}

/**
 * Per generation, at most one `write` every `gapMs`: the latest report wins, a trailing write
 * follows the last report of a burst (it is never lost), and writes of one generation never overlap.
 */
export function createReportThrottle(gapMs: number, write: (id: string, p: EngineProgress) => Promise<unknown>) {
  const slots = new Map<string, Slot>();

  function flush(id: string, slot: Slot): void {
    slot.timer = undefined;
    const p = slot.pending;
    slot.pending = undefined;
    if (!p) return;
    slot.last = Date.now();
    slot.chain = slot.chain.then(() => write(id, p)).then(
      () => undefined,
      () => undefined,
    );
  }

  return {
    report(id: string, p: EngineProgress): void {
      let slot = slots.get(id);
      if (!slot) {
        slot = { last: 0, chain: Promise.resolve() };
        slots.set(id, slot);
      }
      slot.pending = p;
      if (slot.timer) return;
      const wait = Math.max(0, slot.last + gapMs - Date.now());
      if (wait === 0) flush(id, slot);
      else {
        const s = slot;
        slot.timer = setTimeout(() => flush(id, s), wait);
      }
    },
    /** Writes under way for the generation, awaited. */
    async idle(id: string): Promise<void> {
      await slots.get(id)?.chain;
    },
    /** The generation's reports end: a pending one is dropped, writes under way are awaited. */
    async settle(id: string): Promise<void> {
      const slot = slots.get(id);
      if (!slot) return;
      clearTimeout(slot.timer);
      slot.pending = undefined;
      slots.delete(id);
      await slot.chain;
    },
  };
}

/**
 * Writes generations' live progress (columns progress and stage; each write NOTIFYs its
 * subscribers). Two ways in:
 * - `report`: an engine that reports as often as it likes (a renderer's images, a websocket's
 *   steps), throttled in this process by createReportThrottle to one write every `gapMs`.
 * - `set`: one write now (a poll's answer, the core's own stage). `force` for the core's stages,
 *   which are always written; otherwise the database keeps the same gap across every process that
 *   polls the job. Both write only a change, and only while the generation is processing.
 * A failed write is logged and dropped: progress is a hint, never a reason to fail a generation.
 */
export function createProgressWriter({ db, log }: Pick<Deps, 'db' | 'log'>, gapMs = PROGRESS_GAP_MS) {
  async function write(id: string, p: EngineProgress, minGapMs: number | null): Promise<boolean> {
    try {
      return await writeGenerationProgress(db, id, storedProgress(p), minGapMs);
    } catch (e) {
      log.warn({ err: e, generation_id: id }, 'generation progress could not be written');
      return false;
    }
  }
  // This process is an in-process engine's only reporter: its own throttle holds, the database's gap is not asked.
  const throttle = createReportThrottle(gapMs, (id, p) => write(id, p, null));

  return {
    report: throttle.report,
    settle: throttle.settle,
    /** Answers whether it was written (a repeat, a report inside the gap or an ended generation is not). */
    async set(id: string, p: EngineProgress, { force = false }: { force?: boolean } = {}): Promise<boolean> {
      await throttle.idle(id);
      // A little under the gap, so that polls spaced exactly by it are not skipped for a clock's jitter.
      return write(id, p, force ? null : Math.max(0, gapMs - 20));
    },
  };
}
export type ProgressWriter = ReturnType<typeof createProgressWriter>;
