import { beat, returnJobAttempt, unlockJobsOfDeadWorkers } from '../repositories/worker-heartbeats.ts';
import type { Deps } from './context.ts';

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
  };
}
export type WorkerLiveness = ReturnType<typeof createWorkerLiveness>;
