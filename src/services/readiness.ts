import type pg from 'pg';
import { pendingMigrations } from '../db/migrate.ts';
import type { Deps } from './deps.ts';

export interface Readiness {
  ready: boolean;
  checks: { database: string; migrations: string; worker?: string; shutdown?: string };
}

/**
 * GET /readyz: this process can do its work now. The database answers (within 2 s), every
 * migration is applied, and a process that runs a worker has beaten recently (its last successful
 * heartbeat younger than two beats). /healthz stays liveness: the process is up. Anyone may ask:
 * the answer says which check failed in generic words, the detail (the driver's error, the
 * migrations' names) goes to the log.
 */
export function createReadiness({ config, log }: Pick<Deps, 'config' | 'log'>, pool: pg.Pool) {
  let workerBeatAt: number | undefined;
  let runsWorker = false;
  let draining = false;
  const withTimeout = <T,>(p: Promise<T>, ms: number): Promise<T> =>
    Promise.race([p, new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms).unref())]);
  return {
    /** Called by a worker of this process after each heartbeat it wrote. */
    workerBeat(): void {
      runsWorker = true;
      workerBeatAt = Date.now();
    },
    /** SIGTERM: a balancer reading /readyz stops sending new work while the open work finishes. */
    drain(): void {
      draining = true;
    },
    async check(): Promise<Readiness> {
      const checks: Readiness['checks'] = { database: 'ok', migrations: 'ok' };
      let ready = true;
      if (draining) {
        ready = false;
        checks.shutdown = 'draining: this process is shutting down';
      }
      try {
        const pending = await withTimeout(pendingMigrations(pool), 2000);
        if (pending.length) {
          ready = false;
          checks.migrations = `${pending.length} not applied`;
          log.warn({ pending }, 'readiness: migrations not applied');
        }
      } catch (e) {
        ready = false;
        checks.database = 'unreachable';
        log.warn({ err: e }, 'readiness: the database did not answer');
        checks.migrations = 'unknown';
      }
      if (runsWorker) {
        const age = workerBeatAt === undefined ? Infinity : (Date.now() - workerBeatAt) / 1000;
        const limit = config.workerHeartbeatSeconds * 2;
        checks.worker = age <= limit ? 'ok' : `last heartbeat ${Math.round(age)} s ago (more than ${limit} s)`;
        if (age > limit) ready = false;
      }
      return { ready, checks };
    },
  };
}
