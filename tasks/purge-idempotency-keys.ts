import type { Task } from 'graphile-worker';
import type { Db } from '../src/db/pool.ts';
import { purgeExpiredIdempotencyKeys } from '../src/services/idempotency.ts';

/** Cron: stored responses live 24 hours. */
export const purgeIdempotencyKeys =
  (db: Db): Task =>
  async () => {
    await purgeExpiredIdempotencyKeys(db);
  };
