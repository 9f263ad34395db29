import { setTimeout as sleep } from 'node:timers/promises';
import { isDatabaseUnavailable } from '../domain/database-unavailable.ts';

export interface OutagePatience {
  /** The failure the caller already met: the first try waits before it. */
  firstError?: unknown;
  /** Stop waiting (the last error is thrown) once this says so: a pool ending, say. */
  stop?: () => boolean;
  /** Stop waiting past this time (ms since the epoch). */
  until?: number;
  signal?: AbortSignal;
}

/**
 * `attempt` again and again while it fails because the database is away, backing off 250 ms
 * doubling to 5 s; any other error, or the end of the caller's patience, is thrown at once.
 */
export async function waitOutOutage<T>(attempt: () => Promise<T>, patience: OutagePatience = {}): Promise<T> {
  let error = patience.firstError;
  for (let delay = 250; ; delay = Math.min(delay * 2, 5_000)) {
    if (error !== undefined) {
      const tooLate = patience.until !== undefined && Date.now() + delay > patience.until;
      if (!isDatabaseUnavailable(error) || patience.stop?.() || patience.signal?.aborted || tooLate) throw error;
      await sleep(delay, undefined, patience.signal ? { signal: patience.signal } : {}).catch(() => {});
    }
    try {
      return await attempt();
    } catch (e) {
      error = e;
    }
  }
}
