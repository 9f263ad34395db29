import { EventEmitter } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { Logger as WorkerLogger, run, type Runner, type TaskList, type WorkerEvents } from 'graphile-worker';
import type { App } from './app.ts';
import { crontab, taskList } from '../tasks/index.ts';

/**
 * A graphile-worker runner on the app's pool; its jobs are added in the same transactions as their data.
 * `replace` swaps named tasks' handlers (the pickup benchmark times the start of a task alone).
 */
export async function startWorker(app: App, opts: { replace?: TaskList } = {}): Promise<WorkerRunner> {
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
  // Its own pool, patient while the database is away (see createPatientPool); ended with the worker.
  const pgPool = app.database.openPatientPool(app.config.workerConcurrency + 4);
  const startRunner = () =>
    run({
      events,
      pgPool,
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
          // Batched failures are flushed before the pool stops; unbatched ones are sent without being
          // awaited, and a shutdown could close the database under a job being released.
          failJobBatchDelay: 0,
          // On shutdown, running jobs get most of the grace to finish; then their abort signal stops them.
          gracefulShutdownAbortTimeout: app.config.shutdownGraceSeconds * 800,
        },
      },
      logger: new WorkerLogger((scope) => (level, message, meta) => {
        const fn = level === 'error' ? log.error : level === 'warning' ? log.warn : log.debug;
        fn.call(log, { ...scope, ...(meta ?? {}) }, message);
      }),
    });

  const stopping = new AbortController();
  let runner = await startRunner();
  let running = true;
  let restarting: Promise<void> = Promise.resolve();
  // graphile-worker stops its pool by itself when it finds the queue in a state it cannot record
  // (a job's end it could not write). The jobs that pool held are unlocked once its id stops
  // beating (keepAlive); a new runner takes the queue on, so the process keeps working its jobs.
  // A runner that stops again within a minute waits twice as long before the next (1 s to 30 s).
  let restartDelay = 500;
  const supervise = (current: Runner): void => {
    const startedAt = Date.now();
    const ended = (err?: unknown) => {
      running = false;
      if (stopping.signal.aborted) return;
      restartDelay = Date.now() - startedAt < 60_000 ? Math.min(restartDelay * 2, 30_000) : 1000;
      log.error({ err, restart_in_ms: restartDelay }, 'the job worker stopped by itself; starting a new one');
      restarting = restart();
    };
    current.promise.then(() => ended(), ended);
  };
  const restart = async () => {
    for (;;) {
      try {
        await sleep(restartDelay, undefined, { signal: stopping.signal });
        runner = await startRunner();
        running = true;
        supervise(runner);
        return;
      } catch (e) {
        if (stopping.signal.aborted) return;
        restartDelay = Math.min(restartDelay * 2, 30_000);
        log.error({ err: e, restart_in_ms: restartDelay }, 'the job worker could not start; trying again');
      }
    }
  };
  supervise(runner);

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
  const stopped = async (stop: (r: Runner) => Promise<void>) => {
    stopping.abort();
    try {
      if (!running) {
        // A new runner may be starting, waiting for the database: ending the pool ends its wait.
        void pgPool.end().catch(() => {});
        await restarting;
      }
      if (running) await stop(runner);
    } finally {
      clearInterval(timer);
      await pgPool.end().catch(() => {});
    }
  };
  return {
    stop: () => stopped((r) => r.stop()),
    drain: (graceMs: number) => stopped((r) => drainWorker(r, graceMs)),
  };
}

/** The job worker of a process, started again if graphile-worker stops it by itself. */
export interface WorkerRunner {
  stop: () => Promise<void>;
  /**
   * SIGTERM: no new job is taken; running ones finish, or at 80 % of the grace are stopped and
   * released (local-queue jobs go back at once); whatever still runs when the grace ends is failed
   * back to the queue by graphile-worker's forceful shutdown.
   */
  drain: (graceMs: number) => Promise<void>;
}

async function drainWorker(runner: Runner, graceMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const graceOver = new Promise<'over'>((resolve) => (timer = setTimeout(() => resolve('over'), graceMs)));
  const stopped = runner.stop().then(() => 'stopped' as const);
  try {
    if ((await Promise.race([stopped, graceOver])) === 'over') await runner.kill('the shutdown grace ran out');
  } finally {
    clearTimeout(timer);
  }
}
