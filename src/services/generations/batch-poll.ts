import { setTimeout as sleep } from 'node:timers/promises';
import type { GenerationRow, UpstreamJobRow } from '../../db/types.ts';
import type { GenerationOperation } from '../../domain/generation-types.ts';
import { UpstreamError, type Engine, type UpstreamStatus } from '../../adapters/engines/engine-contract.ts';
import { pollSpacingMs } from '../../domain/poll-schedule.ts';
import { findGenerationById } from '../../repositories/generations.ts';
import { leaseBatchCompanions, pollLineAheadMs } from '../../repositories/batch-polls.ts';
import { passReadGate } from '../../repositories/poll-budgets.ts';
import { countPoll } from '../../repositories/upstream-jobs.ts';
import type { Deps } from '../deps.ts';
import type { PollScheduler } from './poll-budget.ts';
import type { createProgressWriter } from './progress.ts';

// The companions' own looks are put off this long while the batch decides them: longer than a
// read and the copies of the results it finds (each copy may take up to 5 minutes).
const LEASE_MS = 6 * 60_000;
// A further page waits this long at most for the provider's read gate; past it the batch stops.
const PAGE_WAIT_MS = 2_000;
// Finished companions are copied a few at a time inside the look that read them.
const COPIES_AT_ONCE = 4;
// Jobs a list did not show are remembered (here, per process) and read alone from then on.
const UNLISTED_KEPT = 5_000;

type Final = Exclude<UpstreamStatus, { state: 'pending' }>;

/**
 * Batched reads of a provider that lists its jobs (Engine.batchRead): the look that holds the
 * provider's read slot reads, with its own job, up to `size - 1` other live jobs of the provider
 * whose looks are due soonest. Each of them ends or waits exactly as its own look would decide
 * (finish: results copied or the generation failed and refunded; pending: its next look by its
 * age). A job the list did not show (older than the pages read, or not listed at all) is read
 * alone, now and from then on. Nothing is ever submitted here.
 */
export function createBatchPolls(deps: Pick<Deps, 'db' | 'log'> & {
  polls: PollScheduler;
  progress: ReturnType<typeof createProgressWriter>;
  hooked: (engine: Engine, operation: GenerationOperation) => boolean;
  finish: (g: GenerationRow, job: UpstreamJobRow, engine: Engine, status: Final) => Promise<void>;
}) {
  const { db, log, polls, progress, hooked, finish } = deps;
  const unlisted = new Set<string>();
  // Looks that waited once for a batch (here, per process): the next one takes its own slot, so a
  // job never waits on lines whose looks cannot cover it (another kind of job of the provider).
  const rode = new Set<string>();
  const remember = (id: string) => {
    unlisted.add(id);
    if (unlisted.size > UNLISTED_KEPT) unlisted.delete(unlisted.values().next().value!);
  };
  const covers = (engine: Engine, handle: Record<string, unknown>) => Object.entries(engine.batchRead?.handles ?? {}).every(([k, v]) => handle[k] === v);

  /** A further page: only when the provider's read gate lets it through soon. */
  const nextPage = (engine: Engine) => async (): Promise<boolean> => {
    if (!engine.pollBudget) return true;
    const spacing = pollSpacingMs(engine.pollBudget);
    for (;;) {
      const waitMs = await passReadGate(db, engine.name, spacing);
      if (waitMs === 0) return true;
      if (waitMs > PAGE_WAIT_MS) return false;
      await sleep(waitMs);
    }
  };

  /** What a companion's own look would have done with this answer. */
  async function settle(job: UpstreamJobRow, engine: Engine, status: UpstreamStatus | undefined): Promise<void> {
    rode.delete(job.id);
    if (!status) {
      remember(job.id);
      return polls.schedule(job.id, 0);
    }
    const g = await findGenerationById(db, job.generation_id);
    if (!g || g.status !== 'processing') {
      // Ended meanwhile: its own look stops the provider's work; it comes at once.
      return polls.schedule(job.id, 0);
    }
    if (status.state === 'pending') {
      await countPoll(db, job.id, `${status.detail ?? 'pending'} (read with others)`);
      if (status.progress) await progress.set(g.id, status.progress);
      return polls.schedule(job.id, status.retryAfterMs ?? polls.pendingDelay(job.created_at, hooked(engine, g.operation)));
    }
    try {
      await finish(g, job, engine, status);
    } catch (e) {
      // Its own look, at the end of the lease, reads it again.
      log.warn({ err: e, upstream_job_id: job.id, provider: engine.name }, 'a job read with others could not be finished');
    }
  }

  return {
    /**
     * Before a look takes a read slot: true when a look already holds a slot ahead and will read
     * this job with its own, so this one waits just past it instead of taking a slot of its own
     * (the job was queued again). Were every look to take a slot, the line would grow by one
     * spacing per job whatever a read covers, and batching would save requests but no time.
     * A look the batch did not cover comes back when the line is empty and takes its slot then.
     */
    async ride(job: UpstreamJobRow, engine: Engine): Promise<boolean> {
      if (!engine.batchRead || !engine.pollBudget || !covers(engine, job.handle) || unlisted.has(job.id)) return false;
      if (rode.delete(job.id)) return false;
      const spacing = pollSpacingMs(engine.pollBudget);
      const aheadMs = await pollLineAheadMs(db, engine.name);
      if (aheadMs < spacing) return false;
      if (rode.size >= UNLISTED_KEPT) rode.clear();
      rode.add(job.id);
      await polls.schedule(job.id, aheadMs + spacing);
      return true;
    },

    /**
     * The look at `job` (its read slot already passed): its status read together with others, or
     * `alone` (its own read should go now), or `requeued` (the list did not show it and its own read
     * waits for the provider's budget).
     */
    async lead(job: UpstreamJobRow, engine: Engine, signal: AbortSignal): Promise<UpstreamStatus | 'alone' | 'requeued'> {
      const batch = engine.batchRead;
      rode.delete(job.id);
      if (!batch || !covers(engine, job.handle) || unlisted.has(job.id)) return 'alone';
      const companions = await leaseBatchCompanions(db, { provider: engine.name, lead: job.id, handles: batch.handles, skip: [...unlisted], limit: batch.size - 1, leaseMs: LEASE_MS });
      // Alone, its own read says as much as a page and never misses it.
      if (companions.length === 0) return 'alone';
      let found: Map<string, UpstreamStatus>;
      try {
        found = await batch.pollMany([job.handle, ...companions.map((c) => c.handle)], signal, nextPage(engine));
      } catch (e) {
        // The read failed: each companion's look comes back in its turn, within the budget.
        await Promise.all(companions.map((c) => polls.schedule(c.id, 0)));
        // A 429 holds back every read of the provider: the lead's look waits as its own read would.
        if (e instanceof UpstreamError && e.failure === 'rate_limited') throw e;
        // Anything else (an error, an answer too large, a refusal of the read itself) says nothing
        // of the lead's own job: a batch is only a saving, so the lead is read alone, in its turn.
        log.warn({ err: e, upstream_job_id: job.id, provider: engine.name }, 'a read of many jobs failed; each is read alone');
        return (await polls.admit(job.id, engine, 'slot')) ? 'alone' : 'requeued';
      }
      const byId = (c: UpstreamJobRow) => (c.provider_job_id ? found.get(c.provider_job_id) : undefined);
      // Waiting ones first: their next looks are queued before any copy starts.
      const waiting = companions.filter((c) => byId(c)?.state !== 'succeeded' && byId(c)?.state !== 'failed');
      for (const c of waiting) await settle(c, engine, byId(c));
      const ended = companions.filter((c) => !waiting.includes(c));
      for (let i = 0; i < ended.length; i += COPIES_AT_ONCE) await Promise.all(ended.slice(i, i + COPIES_AT_ONCE).map((c) => settle(c, engine, byId(c))));
      const own = job.provider_job_id ? found.get(job.provider_job_id) : undefined;
      if (own) return own;
      remember(job.id);
      return (await polls.admit(job.id, engine, 'slot')) ? 'alone' : 'requeued';
    },
  };
}
export type BatchPolls = ReturnType<typeof createBatchPolls>;
