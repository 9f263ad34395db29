import { EventEmitter } from 'node:events';
import { Logger as WorkerLogger, run, type Runner, type WorkerEvents } from 'graphile-worker';
import type { App } from './app.ts';
import { crontab, taskList } from './jobs/index.ts';

/** A graphile-worker runner on the app's pool; its jobs are added in the same transactions as their data. */
export async function startWorker(app: App): Promise<Runner> {
  const log = app.log.child({ component: 'worker' });
  const liveness = app.services.workerLiveness;
  const workerIds = new Set<string>();
  // Listeners go on before run(): its workers are created (and emit) while it starts.
  const events = new EventEmitter() as WorkerEvents;
  events.on('worker:create', ({ worker }) => {
    workerIds.add(worker.workerId);
    void liveness.beat([worker.workerId]).catch(() => {});
  });
  events.on('worker:release', ({ worker }) => workerIds.delete(worker.workerId));
  const runner = await run({
    events,
    pgPool: app.database.pool,
    concurrency: app.config.workerConcurrency,
    taskList: taskList(app.jobs),
    crontab: crontab(),
    noHandleSignals: true,
    pollInterval: 1000,
    logger: new WorkerLogger((scope) => (level, message, meta) => {
      const fn = level === 'error' ? log.error : level === 'warning' ? log.warn : log.debug;
      fn.call(log, { ...scope, ...(meta ?? {}) }, message);
    }),
  });

  const keepAlive = async () => {
    try {
      await liveness.beat(workerIds);
      const unlocked = await liveness.unlockJobsOfSilentWorkers(workerIds);
      if (unlocked.length) log.warn({ workers: unlocked }, 'unlocked the jobs of workers that stopped beating');
    } catch (e) {
      log.warn({ err: e }, 'worker liveness check failed');
    }
  };
  await keepAlive();
  const timer = setInterval(keepAlive, app.config.workerHeartbeatSeconds * 1000);
  timer.unref();
  void runner.promise.finally(() => clearInterval(timer));
  return runner;
}
