import { EngineError, type EngineResult } from '../../adapters/engines/engine.ts';
import { inSpan } from '../../observability/tracing.ts';
import { routeModel, type EngineRegistry } from '../../adapters/engines/registry.ts';
import { isUpstreamEngine, UpstreamError } from '../../adapters/engines/upstream.ts';
import { DownloadError } from '../../adapters/net/download.ts';
import { findGenerationById } from '../../repositories/generations.ts';
import type { Deps } from '../context.ts';
import type { GenerationLifecycle } from './lifecycle.ts';
import { storeResults } from './results.ts';
import type { UpstreamCore } from './upstream.ts';
import { subscribeGenerationEvents } from '../../events/generation-events.ts';
import type { EventBus } from '../../events/pg-events.ts';

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
  deps: Pick<Deps, 'db' | 'storage' | 'config' | 'log'> & { engines: EngineRegistry; lifecycle: GenerationLifecycle; upstream: Pick<UpstreamCore, 'start' | 'inputsOf'>; events?: EventBus },
) {
  const { db, storage, config, log, engines, lifecycle, upstream, events } = deps;

  /**
   * Aborts `stop` when the generation ends while it renders (a cancel, the sweeper's deadline),
   * heard on the event bus from whichever node ended it. Answers the function that stops watching.
   */
  async function watchEnd(g: { id: string; team_id: string }, stop: AbortController): Promise<() => Promise<void>> {
    if (!events) return async () => {};
    const changes = subscribeGenerationEvents(events, { teamId: g.team_id, generationId: g.id });
    await changes.ready;
    void (async () => {
      for await (const change of changes) {
        if (change.status === 'processing') continue;
        stop.abort(new Error('the generation ended while it rendered'));
        break;
      }
    })();
    // An end committed before the watch listened is read instead.
    const now = await findGenerationById(db, g.id);
    if (now && now.status !== 'processing') stop.abort(new Error('the generation ended before it rendered'));
    return async () => {
      await changes.return();
    };
  }

  return {
    /** `shutdown` aborts when the worker stops: the render is dropped and the job goes back to the queue. */
    async run(generationId: string, attempt: Attempt, shutdown?: AbortSignal): Promise<void> {
      const g = await findGenerationById(db, generationId);
      if (!g || g.status !== 'processing') return;
      const chain = engines.chainFor({ model: routeModel(g.params as Record<string, unknown>), operation: g.operation });
      // Upstream: submit and return (polls finish it without holding this worker slot), unless the
      // route falls back to the local engine.
      const engine = isUpstreamEngine(chain[0]!) ? await upstream.start(g, chain) : chain[0];
      if (!engine || isUpstreamEngine(engine)) return;
      const lastAttempt = attempt.number >= attempt.max;
      let result: EngineResult;
      const ended = new AbortController();
      const unwatch = await watchEnd(g, ended);
      try {
        const inputs = await upstream.inputsOf(g, { speaksScript: true });
        const signals = [AbortSignal.timeout(config.engineAttemptTimeoutSeconds * 1000), ended.signal];
        if (shutdown) signals.push(shutdown);
        const request = { generationId: g.id, operation: g.operation, params: g.params as Record<string, unknown>, inputs };
        result = await inSpan('engine.run', { 'adforge.engine': engine.name, 'adforge.generation_id': g.id, 'adforge.operation': g.operation }, () => engine.make(request, AbortSignal.any(signals)));
      } catch (e) {
        if (shutdown?.aborted && !ended.signal.aborted) {
          log.info({ generation_id: g.id }, 'render stopped: the worker is shutting down; the job goes back to the queue');
          throw new RetryLater('the worker shut down during the render', { cause: e });
        }
        // Ended elsewhere (cancelled): its render is stopped and there is nothing left to record.
        if (ended.signal.aborted) {
          log.info({ generation_id: g.id }, 'render stopped: the generation ended');
          return;
        }
        const verdict = classify(e);
        log.warn({ err: e, generation_id: g.id, attempt: attempt.number, transient: verdict.transient }, 'generation attempt failed');
        if (verdict.transient && !lastAttempt) throw new RetryLater(verdict.message, { cause: e });
        await lifecycle.fail(g.id, verdict.message, { engine: engine.name });
        return;
      } finally {
        await unwatch();
      }

      const { keys, meta, bytes } = await inSpan('storage.put', { 'adforge.generation_id': g.id, 'adforge.files': result.files.length }, () => storeResults(storage, g, result.files));
      await lifecycle.complete(g.id, keys, meta, { engine: engine.name, outputBytes: bytes });
    },
  };
}
export type GenerationRunner = ReturnType<typeof createGenerationRunner>;

/** What the user sees as `error`, and whether another attempt could help. */
function classify(e: unknown): { message: string; transient: boolean } {
  if (e instanceof EngineError) return { message: e.message, transient: e.transient };
  // The input resolver speaks to providers; to the local engine a fetch that failed stays one, anything else is ours.
  if (e instanceof UpstreamError) return classify(e.cause ?? new Error(e.message));
  if (e instanceof DownloadError) {
    return { message: `an input could not be fetched: ${e.message}`, transient: e.reason === 'timeout' || e.reason === 'network' };
  }
  if (e instanceof Error && e.name === 'TimeoutError') return { message: 'the engine took too long', transient: true };
  return { message: 'internal error while generating', transient: true };
}
