import type { Task } from 'graphile-worker';
import type { Db } from '../src/db/pool.ts';
import { purgeRateLimitHits as purge } from '../src/repositories/rate-limits.ts';

/** Cron: rate-limit windows are a minute long; an hour of history is plenty. */
export const purgeRateLimitHits =
  (db: Db): Task =>
  async () => {
    await purge(db);
  };
