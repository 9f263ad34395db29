import { EngineError, type EngineResult } from '../../adapters/engines/engine.ts';
import { routeModel, type EngineRegistry } from '../../adapters/engines/registry.ts';
import { isUpstreamEngine } from '../../adapters/engines/upstream.ts';
import { DownloadError } from '../../adapters/net/download.ts';
import { findGenerationById } from '../../repositories/generations.ts';
import type { Deps } from '../context.ts';
import { buildEngineJob } from './engine-job.ts';
import type { GenerationLifecycle } from './lifecycle.ts';
import { storeResults } from './results.ts';
import type { UpstreamCore } from './upstream.ts';

export interface Attempt {
  number: number;
  max: number;
}

/** Thrown to ask the job queue for another attempt later (with its backoff). */
export class RetryLater extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'RetryLater';
  }
}

/**
 * The slow half of a generation, run by the worker: render, store, then end it in one
 * transaction. Running it twice is harmless: an ended generation is left alone.
 */
export function createGenerationRunner(
  deps: Pick<Deps, 'db' | 'storage' | 'config' | 'log'> & { engines: EngineRegistry; lifecycle: GenerationLifecycle; upstream: Pick<UpstreamCore, 'start'> },
) {
  const { db, storage, config, log, engines, lifecycle, upstream } = deps;

  return {
    async run(generationId: string, attempt: Attempt): Promise<void> {
      const g = await findGenerationById(db, generationId);
      if (!g || g.status !== 'processing') return;
      const chain = engines.chainFor({ model: routeModel(g.params as Record<string, unknown>), operation: g.operation });
      // Upstream: submit and return (polls finish it without holding this worker slot), unless the
      // route falls back to the local engine.
      const engine = isUpstreamEngine(chain[0]!) ? await upstream.start(g, chain) : chain[0];
      if (!engine || isUpstreamEngine(engine)) return;
      const lastAttempt = attempt.number >= attempt.max;
      let result: EngineResult;
      try {
        const job = await buildEngineJob(
          { db, storage, allowPrivate: config.allowPrivateNetworkUrls, maxVideoBytes: config.maxInputVideoBytes },
          g,
        );
        result = await engine.run(job, AbortSignal.timeout(config.engineAttemptTimeoutSeconds * 1000));
      } catch (e) {
        const verdict = classify(e);
        log.warn({ err: e, generation_id: g.id, attempt: attempt.number, transient: verdict.transient }, 'generation attempt failed');
        if (verdict.transient && !lastAttempt) throw new RetryLater(verdict.message, { cause: e });
        await lifecycle.fail(g.id, verdict.message);
        return;
      }

      const { keys, meta } = await storeResults(storage, g, result.files);
      await lifecycle.complete(g.id, keys, meta);
    },
  };
}
export type GenerationRunner = ReturnType<typeof createGenerationRunner>;

/** What the user sees as `error`, and whether another attempt could help. */
function classify(e: unknown): { message: string; transient: boolean } {
  if (e instanceof EngineError) return { message: e.message, transient: e.transient };
  if (e instanceof DownloadError) {
    return { message: `an input could not be fetched: ${e.message}`, transient: e.reason === 'timeout' || e.reason === 'network' };
  }
  if (e instanceof Error && e.name === 'TimeoutError') return { message: 'the engine took too long', transient: true };
  return { message: 'internal error while generating', transient: true };
}
