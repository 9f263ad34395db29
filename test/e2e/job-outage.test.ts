import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineJob, queueJob } from '../../src/jobs/define.ts';
import { defineTask, type TaskDefinition } from '../../tasks/define.ts';
import { taskList } from '../../tasks/index.ts';
import { startWorker } from '../../src/worker.ts';
import { startTestService, type TestService } from '../support/app.ts';
import { waitUntil } from '../support/cli-run.ts';
import { startTcpProxy } from '../support/tcp-proxy.ts';

// The service and its worker reach PostgreSQL through a hop a job's handler cuts while it runs:
// the database going away under a running job, as when the postmaster restarts.
let svc: TestService;
let proxy: Awaited<ReturnType<typeof startTcpProxy>>;

beforeAll(async () => {
  svc = await startTestService({ WORKER_CONCURRENCY: '1' }, {
    databaseUrl: async (url) => {
      const u = new URL(url);
      proxy = await startTcpProxy({ host: u.hostname, port: Number(u.port) });
      u.host = `127.0.0.1:${proxy.port}`;
      return u.toString();
    },
  });
});
afterAll(async () => {
  await proxy?.restore().catch(() => {});
  await svc?.close();
  await proxy?.close();
});

/** A job whose first run fails as `failFirst` makes it fail; every run records the attempt graphile-worker counted. */
function jobFailingOnce(name: string, failFirst: () => Promise<void>): { task: TaskDefinition; runs: number[] } {
  const runs: number[] = [];
  const task = defineTask(defineJob({ name, payload: z.object({}), options: { maxAttempts: 10 } }), async (_ctx, _payload, helpers) => {
    runs.push(helpers.job.attempts);
    if (runs.length === 1) await failFirst();
  });
  return { task, runs };
}

async function runUntilTwice(task: TaskDefinition, runs: number[]): Promise<void> {
  await queueJob(svc.app.db, task.job, {});
  const worker = await startWorker(svc.app, { replace: taskList(svc.app.jobs, [task], []) });
  try {
    await waitUntil(async () => runs.length >= 2, 30_000, 'the job to run a second time');
  } finally {
    await worker.stop();
  }
}

describe('a job that fails because the database went away', () => {
  it('waits for the database, then gets its attempt back: its next run is counted as its first again', async () => {
    const { task, runs } = jobFailingOnce('outage_probe', async () => {
      await proxy.cut();
      setTimeout(() => void proxy.restore().catch(() => {}), 1500);
      await svc.app.db.selectFrom('teams').select('id').execute();
    });
    await runUntilTwice(task, runs);
    expect(runs).toEqual([1, 1]);
  });

  it('an error that only looks like it (a host refusing a connection, the database answering) uses its attempt as usual', async () => {
    const { task, runs } = jobFailingOnce('refused_probe', async () => {
      throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' });
    });
    await runUntilTwice(task, runs);
    expect(runs).toEqual([1, 2]);
  });
});
