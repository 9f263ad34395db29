import { routeModel, type EngineRegistry } from '../../adapters/engines/registry.ts';
import { findGenerationById } from '../../repositories/generations.ts';
import type { Deps } from '../deps.ts';
import type { Attempt } from './in-process.ts';
import type { UpstreamCore } from './engine-jobs.ts';

/**
 * The slow half of a generation, run by the worker: its route's engines are asked in turn through
 * the one submit/poll path (services/generations/engine-jobs.ts); an engine that renders here answers
 * at once, a provider's job is polled by later jobs. Running it twice is harmless: an ended
 * generation is left alone.
 */
export function createGenerationRunner(deps: Pick<Deps, 'db'> & { engines: EngineRegistry; upstream: Pick<UpstreamCore, 'start'> }) {
  const { db, engines, upstream } = deps;
  return {
    /** `shutdown` aborts when the worker stops: a render is dropped and the job goes back to the queue. */
    async run(generationId: string, attempt: Attempt, shutdown?: AbortSignal): Promise<void> {
      const g = await findGenerationById(db, generationId);
      if (!g || g.status !== 'processing') return;
      const chain = engines.chainFor({ model: routeModel(g.params as Record<string, unknown>), operation: g.operation });
      await upstream.start(g, chain, { attempt, ...(shutdown ? { shutdown } : {}) });
    },
  };
}
export type GenerationRunner = ReturnType<typeof createGenerationRunner>;
