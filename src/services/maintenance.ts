import { overdueGenerationIds } from '../repositories/generations.ts';
import { purgeRateLimitHits } from '../repositories/rate-limits.ts';
import { purgeFullBuckets } from '../repositories/rate-buckets.ts';
import { pruneSignInState } from '../repositories/sessions.ts';
import { SIGN_IN_WINDOW_MS } from '../domain/dashboard-users.ts';
import type { Deps } from './deps.ts';
import type { GenerationLifecycle } from './generations/lifecycle.ts';
import { purgeExpiredIdempotencyKeys } from './idempotency.ts';
import { createAuditService } from './audit.ts';

/** The housekeeping the worker's crontab runs. */
export function createMaintenanceService({ db, config }: Pick<Deps, 'db' | 'config'>, lifecycle: Pick<GenerationLifecycle, 'endUnfinished'>) {
  const audit = createAuditService({ db, config });
  return {
    /**
     * Ends every generation past its deadline: failed and refunded, or, when it kept some of its
     * images, completed with those and the rest refunded (lifecycle.endUnfinished); the ids this call ended.
     */
    async sweepOverdueGenerations(): Promise<string[]> {
      const ended: string[] = [];
      for (const id of await overdueGenerationIds(db)) {
        if (await lifecycle.endUnfinished(id, 'timed out: the generation did not finish in time')) ended.push(id);
      }
      return ended;
    },
    purgeIdempotencyKeys: (): Promise<number> => purgeExpiredIdempotencyKeys(db),
    /** The scrape limit's old hits and the API keys' buckets that are full again. */
    purgeRateLimitHits: async (): Promise<number> => (await purgeRateLimitHits(db)) + (await purgeFullBuckets(db)),
    pruneSignInState: (): Promise<void> => pruneSignInState(db, new Date(Date.now() - SIGN_IN_WINDOW_MS)),
    /** Audit lines past AUDIT_RETENTION_DAYS; the number purged. */
    purgeAuditLog: (): Promise<number> => audit.purge(),
  };
}
export type MaintenanceService = ReturnType<typeof createMaintenanceService>;
