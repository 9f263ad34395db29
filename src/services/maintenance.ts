import { overdueGenerationIds } from '../repositories/generations.ts';
import { purgeRateLimitHits } from '../repositories/rate-limits.ts';
import { purgeFullBuckets } from '../repositories/rate-buckets.ts';
import { pruneSignInState } from '../repositories/sessions.ts';
import { SIGN_IN_WINDOW_MS } from '../domain/dashboard-users.ts';
import type { Deps } from './context.ts';
import type { GenerationLifecycle } from './generations/lifecycle.ts';
import { purgeExpiredIdempotencyKeys } from './idempotency.ts';

/** The housekeeping the worker's crontab runs. */
export function createMaintenanceService({ db }: Pick<Deps, 'db'>, lifecycle: Pick<GenerationLifecycle, 'fail'>) {
  return {
    /** Fails (and refunds) every generation past its deadline; the ids this call ended. */
    async sweepOverdueGenerations(): Promise<string[]> {
      const ended: string[] = [];
      for (const id of await overdueGenerationIds(db)) {
        if (await lifecycle.fail(id, 'timed out: the generation did not finish in time')) ended.push(id);
      }
      return ended;
    },
    purgeIdempotencyKeys: (): Promise<number> => purgeExpiredIdempotencyKeys(db),
    /** The scrape limit's old hits and the API keys' buckets that are full again. */
    purgeRateLimitHits: async (): Promise<number> => (await purgeRateLimitHits(db)) + (await purgeFullBuckets(db)),
    pruneSignInState: (): Promise<void> => pruneSignInState(db, new Date(Date.now() - SIGN_IN_WINDOW_MS)),
  };
}
export type MaintenanceService = ReturnType<typeof createMaintenanceService>;
