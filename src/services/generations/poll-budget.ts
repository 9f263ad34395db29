import { setTimeout as sleep } from 'node:timers/promises';
import type { Engine } from '../../adapters/engines/engine-contract.ts';
import { pollDelayMs, pollSpacingMs, retryDelayMs, type PollPace } from '../../domain/poll-schedule.ts';
import { PRIORITY, queueJob } from '../../jobs/define.ts';
import { pollUpstreamJob } from '../../jobs/poll-upstream.ts';
import { passReadGate, pausePolls, takePollSlot, takeSlotPast } from '../../repositories/poll-budgets.ts';
import type { Deps } from '../deps.ts';

// A slot this close is waited for in the task; a look due later goes back to the queue. A look
// waiting in its task holds a worker slot: at half a second, a budget read near its pace kept most
// of a worker's slots asleep at the gate while 7,500 submits waited (bench:inflight, 10,000 jobs).
const WAIT_IN_TASK_MS = 50;
// A callback's look waits in its task for up to a second (the gap after a read of a slow budget):
// back in the queue it would run up to a second late, and callbacks are few beside routine looks.
const HOOK_WAIT_IN_TASK_MS = 1000;
// A 429 that names no wait still pauses the provider this long.
const DEFAULT_PAUSE_MS = 30_000;
// Of a budget whose provider calls back, the share the slots' line may fill: the rest is left for
// the looks a callback asks for, which read at the next gap instead of at the line's end.
const ROUTINE_SHARE = 0.75;

/**
 * Where a look stands: `take` takes the next slot of its provider's line; `slot` holds one taken
 * earlier; `hook` was asked for by a provider's callback and only waits for the next gap between reads.
 */
export type PollLine = 'take' | 'slot' | 'hook';

/**
 * When each job waiting upstream is looked at: its age sets when it wants its next look
 * (domain/poll-schedule.ts), and its provider's budget, shared by every job and worker process
 * through one row per provider (repositories/poll-budgets.ts), sets when a read may actually go.
 * A look takes the next free slot and, when it is not near, goes back to the queue for it; every
 * read then passes a gate that keeps it one spacing after the provider's previous read, so the
 * budget holds even when queued looks run late together. A 429 pauses the provider's reads for
 * the wait it names.
 */
export function createPollScheduler({ db, config }: Pick<Deps, 'db' | 'config'>) {
  const pace: PollPace = { pollMs: config.upstream.pollMs, maxMs: config.upstream.pollMaxMs, hookedMs: config.upstream.hookedPollMs };
  const ageOf = (createdAt: Date) => Date.now() - createdAt.getTime();

  const schedule = async (upstreamJobId: string, delayMs: number, line: PollLine = 'take') => {
    const mark = line === 'slot' ? { slot: true as const } : line === 'hook' ? { hook: true as const } : {};
    await queueJob(db, pollUpstreamJob, { upstream_job_id: upstreamJobId, ...mark }, { runAt: new Date(Date.now() + Math.max(0, delayMs)), ...(line === 'hook' ? { priority: PRIORITY.calledBack } : {}) });
  };
  // A provider that will call back finishes most jobs by the callback's look: the line leaves room for those.
  const callsBack = (engine: Engine) => Boolean(config.upstream.callbackBaseUrl && (engine.verifyHook || engine.callsBack));
  const lineSpacing = (engine: Engine, budget: NonNullable<Engine['pollBudget']>) => {
    const spacing = pollSpacingMs(budget);
    return callsBack(engine) ? Math.ceil(spacing / ROUTINE_SHARE) : spacing;
  };

  return {
    schedule,
    /**
     * A job's next routine look, `delayMs` from now. When its provider's line already reaches past
     * that, the look takes its slot now and is queued for it: it runs once, at its slot, instead of
     * once to be sent to the line's end and again at it (what keeps a saturated budget from costing
     * the worker twice its reads).
     */
    async next(upstreamJobId: string, engine: Engine, delayMs: number): Promise<void> {
      const slot = engine.pollBudget ? await takeSlotPast(db, engine.name, lineSpacing(engine, engine.pollBudget), delayMs) : null;
      await (slot ? schedule(upstreamJobId, slot.waitMs, 'slot') : schedule(upstreamJobId, delayMs));
    },
    /** The wait before a job's next look while it is pending (`hooked`: its provider will call back). */
    pendingDelay: (createdAt: Date, hooked: boolean) => pollDelayMs(ageOf(createdAt), pace, hooked),
    /** The wait after a look that failed (a 5xx, a reset). */
    retryDelay: (polls: number, createdAt: Date) => retryDelayMs(polls, ageOf(createdAt), pace),
    /** The first look after a submit. */
    firstDelay: (hooked: boolean) => pollDelayMs(0, pace, hooked),

    /**
     * Before reading a job: true when the read may go now (after at most a short wait here);
     * false when the job was queued again for its slot. A look that holds a slot taken earlier, or
     * that a callback asked for, only passes the gate (spacing from the last read, no 429 pause).
     */
    async admit(upstreamJobId: string, engine: Engine, line: PollLine): Promise<boolean> {
      if (!engine.pollBudget) return true;
      const spacing = pollSpacingMs(engine.pollBudget);
      if (line === 'take') {
        const { waitMs } = await takePollSlot(db, engine.name, lineSpacing(engine, engine.pollBudget));
        if (waitMs > WAIT_IN_TASK_MS) {
          await schedule(upstreamJobId, waitMs, 'slot');
          return false;
        }
        if (waitMs > 0) await sleep(waitMs);
      }
      // Looks queued for their slots may run late together (the queue is read about once a
      // second): the gate spaces their reads all the same.
      for (;;) {
        const waitMs = await passReadGate(db, engine.name, spacing);
        if (waitMs === 0) return true;
        if (waitMs > (line === 'hook' ? HOOK_WAIT_IN_TASK_MS : WAIT_IN_TASK_MS)) {
          // A callback's look keeps its place ahead of the line: it comes back when the pause ends.
          if (line === 'hook') {
            await schedule(upstreamJobId, waitMs, 'hook');
            return false;
          }
          // Paused by a 429, or behind looks run late: a new place in the line, so that the looks
          // turned away together do not all come back at the same moment.
          const next = await takePollSlot(db, engine.name, spacing);
          await schedule(upstreamJobId, Math.max(waitMs, next.waitMs), 'slot');
          return false;
        }
        await sleep(waitMs);
      }
    },

    /** The provider answered 429: every read of it waits (Retry-After, a body's retryAfter, Google's RetryInfo). */
    async rateLimited(engine: Engine, retryAfterMs: number | undefined): Promise<number> {
      const ms = retryAfterMs ?? DEFAULT_PAUSE_MS;
      await pausePolls(db, engine.name, ms);
      return ms;
    },
  };
}
export type PollScheduler = ReturnType<typeof createPollScheduler>;
