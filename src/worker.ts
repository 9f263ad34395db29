import { Logger as WorkerLogger, run, type Runner } from 'graphile-worker';
import type { App } from './app.ts';
import { buildTaskList } from '../tasks/index.ts';

/** A graphile-worker runner on the app's pool; its jobs are added in the same transactions as their data. */
export async function startWorker(app: App): Promise<Runner> {
  const log = app.log.child({ component: 'worker' });
  return run({
    pgPool: app.database.pool,
    concurrency: app.config.workerConcurrency,
    taskList: buildTaskList(app),
    noHandleSignals: true,
    pollInterval: 2000,
    logger: new WorkerLogger((scope) => (level, message, meta) => {
      const fn = level === 'error' ? log.error : level === 'warning' ? log.warn : level === 'debug' ? log.debug : log.info;
      fn.call(log, { ...scope, ...(meta ?? {}) }, message);
    }),
  });
}
