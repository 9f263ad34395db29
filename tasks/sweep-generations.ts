import type { Task } from 'graphile-worker';
import type { Db } from '../src/db/pool.ts';
import { overdueGenerationIds } from '../src/repositories/generations.ts';
import type { GenerationLifecycle } from '../src/services/generations/lifecycle.ts';

/** Cron: a generation past its deadline fails and is refunded, whatever happened to its job. */
export const sweepGenerations =
  (db: Db, lifecycle: GenerationLifecycle): Task =>
  async (_raw, helpers) => {
    const ids = await overdueGenerationIds(db);
    for (const id of ids) {
      if (await lifecycle.fail(id, 'timed out: the generation did not finish in time')) {
        helpers.logger.warn(`generation ${id} timed out and was refunded`);
      }
    }
  };
