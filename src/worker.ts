import { EventEmitter } from 'node:events';
import { Logger as WorkerLogger, run, type Runner, type TaskList, type WorkerEvents } from 'graphile-worker';
import type { App } from './app.ts';
import { crontab, taskList } from './jobs/index.ts';

/**
 * A graphile-worker runner on the app's pool; its jobs are added in the same transactions as their data.
 * `replace` swaps named tasks' handlers (the pickup benchmark times the start of a task alone).
 */
export async function startWorker(app: App, opts: { replace?: TaskList } = {}): Promise<Runner> {
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
  // The pool's local queue locks the jobs it fetched under the pool's own id: it beats too, so
  // another process never takes those jobs for a dead worker's.
  events.on('pool:create', ({ workerPool }) => workerIds.add(workerPool.id));
  events.on('pool:release', ({ workerPool }) => workerIds.delete(workerPool.id));
  const runner = await run({
    events,
    pgPool: app.database.pool,
    concurrency: app.config.workerConcurrency,
    taskList: { ...taskList(app.jobs), ...opts.replace },
    crontab: crontab(),
    noHandleSignals: true,
    pollInterval: 1000,
    // Under a stream of creates, one query fetches and locks a batch of jobs and completions are
    // written together: without it the worker falls seconds behind 500 creates/s (bench/RESULTS.md).
    preset: {
      worker: {
        ...(app.config.workerLocalQueue > 1 ? { localQueue: { size: app.config.workerLocalQueue } } : {}),
        completeJobBatchDelay: app.config.workerCompleteBatchMs,
      },
    },
    logger: new WorkerLogger((scope) => (level, message, meta) => {
      const fn = level === 'error' ? log.error : level === 'warning' ? log.warn : log.debug;
      fn.call(log, { ...scope, ...(meta ?? {}) }, message);
    }),
  });

  const keepAlive = async () => {
    try {
      await liveness.beat(workerIds);
      app.services.readiness.workerBeat();
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
