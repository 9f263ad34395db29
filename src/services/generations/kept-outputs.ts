import { UpstreamError, type UpstreamOutput } from '../../adapters/engines/engine-contract.ts';
import type { GenerationRow } from '../../db/types.ts';
import { listKeptOutputs, recordKeptOutput, type KeptOutput } from '../../repositories/kept-outputs.ts';
import type { Deps } from '../deps.ts';

/** Stores one output at its place among the generation's results (engine-jobs' copy of a provider result). */
export type StoreOutput = (output: UpstreamOutput, position: number) => Promise<{ keys: string[]; bytes: number }>;

/**
 * Outputs kept as they are made, for any engine that makes them one call at a time (Gemini makes
 * one image per call, eight in a row for quantity 8, each billed when made). Each output the engine
 * hands over (`keep`) is stored under the generation at once and recorded (table kept_outputs), so
 * that when a later call fails nothing made is lost: the next attempt, on a retry or another worker,
 * is asked only for the rest (its `quantity` is what is missing); the completion lists the kept
 * outputs first, in order (lifecycle.complete); a generation that cannot make the rest ends with
 * them, refunding the unmade share, or fails and deletes their files (lifecycle.endUnfinished, fail).
 * A worker that dies between storing an output and recording it leaves that one file unnamed.
 */
export function createKeptOutputs(deps: Pick<Deps, 'db' | 'storage' | 'log'>) {
  const { db, storage, log } = deps;

  const quantityOf = (g: Pick<GenerationRow, 'params'>): number => Number((g.params as Record<string, unknown>).quantity ?? 1);
  /** The outputs still to make: the request's quantity less those kept (1 for an operation without one). */
  const stillToMake = (g: Pick<GenerationRow, 'params'>, kept: readonly KeptOutput[]): number => quantityOf(g) - kept.length;
  // A generation of one output never goes on after keeping it (it completes, or ends with it): not read.
  const list = async (g: Pick<GenerationRow, 'id' | 'params'>): Promise<KeptOutput[]> => (quantityOf(g) > 1 ? listKeptOutputs(db, g.id) : []);

  return {
    /** The generation's kept outputs, in order. */
    list,
    stillToMake,

    /** The request's params as an attempt gets them: `quantity` is what is still to make. */
    paramsFor(params: Record<string, unknown>, g: Pick<GenerationRow, 'params'>, kept: readonly KeptOutput[]): Record<string, unknown> {
      return kept.length && 'quantity' in params ? { ...params, quantity: stillToMake(g, kept) } : params;
    },

    /**
     * What an upstream attempt is given: the outputs kept so far and `keep`, which stores each new
     * output after them and records it, for this attempt. A refusal when nothing is left to make: the
     * generation then ends with what it kept.
     */
    async forAttempt(g: Pick<GenerationRow, 'id' | 'params'>, attemptId: string, store: StoreOutput): Promise<{ kept: KeptOutput[]; keep?: (output: UpstreamOutput) => Promise<void> }> {
      // One output: nothing to keep while others are made; it comes with the submit's answer.
      if (quantityOf(g) <= 1) return { kept: [] };
      const kept = await list(g);
      if (kept.length && stillToMake(g, kept) <= 0) throw new UpstreamError('refused', 'every output asked for was already made');
      let next = kept.length;
      const keep = async (output: UpstreamOutput): Promise<void> => {
        const position = next++;
        let stored;
        try {
          stored = await store(output, position);
        } catch (e) {
          if (e instanceof UpstreamError) throw e;
          throw new UpstreamError('refused', 'an output the provider made could not be stored', { cause: e });
        }
        const key = stored.keys[0]!;
        if (await recordKeptOutput(db, { generationId: g.id, position, key, bytes: stored.bytes, upstreamJobId: attemptId })) return;
        // Ended meanwhile (a cancel, its deadline): what it would have kept goes, and the engine stops.
        await storage.delete(key).catch((e: unknown) => log.warn({ err: e, key }, 'an output kept too late could not be deleted'));
        throw new UpstreamError('refused', 'the generation ended while its outputs were being made');
      };
      return { kept, keep };
    },
  };
}
export type KeptOutputs = ReturnType<typeof createKeptOutputs>;
