import { EventEmitter } from 'node:events';
import { Logger as WorkerLogger, run, type Runner, type WorkerEvents } from 'graphile-worker';
import type { App } from './app.ts';
import { buildTaskList, CRONTAB } from '../tasks/index.ts';
import { beat, unlockJobsOfDeadWorkers } from './worker-liveness.ts';

/** A graphile-worker runner on the app's pool; its jobs are added in the same transactions as their data. */
export async function startWorker(app: App): Promise<Runner> {
  const log = app.log.child({ component: 'worker' });
  const workerIds = new Set<string>();
  // Listeners go on before run(): its workers are created (and emit) while it starts.
  const events = new EventEmitter() as WorkerEvents;
  events.on('worker:create', ({ worker }) => {
    workerIds.add(worker.workerId);
    void beat(app.db, [worker.workerId]).catch(() => {});
  });
  events.on('worker:release', ({ worker }) => workerIds.delete(worker.workerId));
  const runner = await run({
    events,
    pgPool: app.database.pool,
    concurrency: app.config.workerConcurrency,
    taskList: buildTaskList(app),
    crontab: CRONTAB,
    noHandleSignals: true,
    pollInterval: 1000,
    logger: new WorkerLogger((scope) => (level, message, meta) => {
      const fn = level === 'error' ? log.error : level === 'warning' ? log.warn : log.debug;
      fn.call(log, { ...scope, ...(meta ?? {}) }, message);
    }),
  });

  const liveness = async () => {
    try {
      await beat(app.db, workerIds);
      const unlocked = await unlockJobsOfDeadWorkers(app.db, workerIds, app.config.workerHeartbeatSeconds * 4);
      if (unlocked.length) log.warn({ workers: unlocked }, 'unlocked the jobs of workers that stopped beating');
    } catch (e) {
      log.warn({ err: e }, 'worker liveness check failed');
    }
  };
  await liveness();
  const timer = setInterval(liveness, app.config.workerHeartbeatSeconds * 1000);
  timer.unref();
  void runner.promise.finally(() => clearInterval(timer));
  return runner;
}
