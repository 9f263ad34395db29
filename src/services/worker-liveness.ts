import { waitOutOutage } from '../db/wait-out-outage.ts';
import { isDatabaseUnavailable } from '../domain/database-unavailable.ts';
import { beat, databaseAnswers, returnJobAttempt, unlockJobsOfDeadWorkers } from '../repositories/worker-heartbeats.ts';
import type { Deps } from './deps.ts';

/** How long a job that failed on an outage waits, holding its slot, for the database to answer. */
const OUTAGE_PATIENCE_MS = 60_000;

/**
 * A worker killed mid-job leaves its jobs locked; every live worker beats every few seconds, and
 * the jobs of a worker silent for four beats are unlocked so another finishes them.
 */
export function createWorkerLiveness({ db, config }: Pick<Deps, 'db' | 'config'>) {
  return {
    beat: (workerIds: Iterable<string>): Promise<void> => beat(db, workerIds),
    /** The ids of the silent workers whose jobs were unlocked. */
    unlockJobsOfSilentWorkers: (ownIds: Iterable<string>): Promise<string[]> => unlockJobsOfDeadWorkers(db, ownIds, config.workerHeartbeatSeconds * 4),
    /** Called for a job its worker stopped while shutting down, before it is released. */
    releasedByShutdown: (jobId: string): Promise<void> => returnJobAttempt(db, jobId),
    /**
     * Called for a job that failed with what looks like the database away. If it is away, then once
     * it answers again (within a minute, unless the worker stops) the job gets its attempt back, so
     * graphile-worker retries it after a second. Otherwise every outage a job met would use an
     * attempt and lengthen its backoff (e^attempts seconds): a look at a provider's finished job
     * could wait minutes or run out of attempts, and its generation be swept and refunded although
     * the provider was paid. False when the database answers at once (the error came from elsewhere,
     * a host refusing a download, say) or did not come back in time: the failure counts as usual.
     */
    async afterOutage(jobId: string, signal?: AbortSignal): Promise<boolean> {
      const until = Date.now() + OUTAGE_PATIENCE_MS;
      const away = await databaseAnswers(db).then(
        () => undefined,
        (e: unknown) => (isDatabaseUnavailable(e) ? e : undefined),
      );
      if (away === undefined) return false;
      return waitOutOutage(() => returnJobAttempt(db, jobId), { firstError: away, until, ...(signal ? { signal } : {}) }).then(
        () => true,
        () => false,
      );
    },
  };
}
export type WorkerLiveness = ReturnType<typeof createWorkerLiveness>;
