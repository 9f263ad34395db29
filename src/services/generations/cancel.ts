import { AppError } from '../../domain/errors.ts';
import { pollUpstreamJob } from '../../jobs/poll-upstream.ts';
import { queueJob } from '../../jobs/define.ts';
import { findGeneration, findGenerationById } from '../../repositories/generations.ts';
import { findLiveUpstreamJob } from '../../repositories/upstream-jobs.ts';
import type { Deps } from '../deps.ts';
import type { Principal } from '../principal.ts';
import { requireUuid } from '../ids.ts';
import type { GenerationLifecycle } from './lifecycle.ts';
import { detailView, type GenerationDetail } from './views.ts';

/** The error a cancelled generation carries (the spec has three statuses: it is `failed`). */
export const CANCELLED = 'cancelled';

/**
 * Cancelling a processing generation: it becomes `failed` with error `cancelled`, refunded, its
 * webhook queued and its change announced, all in one transaction (lifecycle.fail); then its work
 * stops. A worker rendering it on the local engine hears the change and kills the render; a job
 * waiting at a provider is looked at now, and that look cancels it there where the provider
 * allows (a result that arrives anyway is discarded: the generation has ended).
 */
export function createGenerationCanceller({ db, storage }: Pick<Deps, 'db' | 'storage'>, lifecycle: Pick<GenerationLifecycle, 'fail'>) {
  return {
    async cancel(p: Principal, id: unknown): Promise<GenerationDetail> {
      const g = await findGeneration(db, p.teamId, requireUuid(id));
      if (!g) throw new AppError('not_found', 'Generation not found');
      let now = g;
      if (g.status === 'processing') {
        const ended = await lifecycle.fail(g.id, CANCELLED, {
          within: async (trx) => {
            const live = await findLiveUpstreamJob(trx, g.id);
            if (live?.state === 'submitted') await queueJob(trx, pollUpstreamJob, { upstream_job_id: live.id });
          },
        });
        // Undefined when it ended otherwise meanwhile: read how.
        now = ended ?? (await findGenerationById(db, g.id))!;
      }
      // Cancelling again answers the same; a generation that ended otherwise cannot be cancelled.
      if (now.status === 'failed' && now.error === CANCELLED) return detailView(storage, now);
      throw new AppError('conflict', `Generation already ${now.status}: only a processing generation can be cancelled`);
    },
  };
}
export type GenerationCanceller = ReturnType<typeof createGenerationCanceller>;
