import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliverWebhookJob } from '../../src/jobs/deliver-webhook.ts';
import { queueJob } from '../../src/jobs/define.ts';
import { pollUpstreamJob } from '../../src/jobs/poll-upstream.ts';
import { runGenerationJob } from '../../src/jobs/run-generation.ts';
import { startWorker } from '../../src/worker.ts';
import { startTestService, type TestService } from '../support/app.ts';
import { waitUntil } from '../support/cli-run.ts';

// One worker slot and no local queue: the order the jobs run in is the order graphile-worker takes them.
let svc: TestService;

beforeAll(async () => {
  svc = await startTestService({ WORKER_CONCURRENCY: '1', WORKER_LOCAL_QUEUE: '0' });
});
afterAll(async () => {
  await svc?.close();
});

describe('job priorities under a backlog of renders', () => {
  it('a look at a provider’s job and a webhook delivery queued after six renders run before them', async () => {
    for (let i = 0; i < 6; i++) await queueJob(svc.app.db, runGenerationJob, { generation_id: randomUUID() }, { config: svc.app.config });
    await queueJob(svc.app.db, pollUpstreamJob, { upstream_job_id: randomUUID() });
    await queueJob(svc.app.db, deliverWebhookJob, { generation_id: randomUUID() });

    const ran: string[] = [];
    const record = (name: string) => async () => void ran.push(name);
    const worker = await startWorker(svc.app, {
      replace: { run_generation: record('render'), poll_upstream: record('poll'), deliver_webhook: record('delivery') },
    });
    try {
      await waitUntil(async () => ran.length === 8, 30_000, 'the eight jobs to run');
    } finally {
      await worker.stop();
    }
    expect(ran.slice(0, 2).sort()).toEqual(['delivery', 'poll']);
    expect(ran.slice(2)).toEqual(Array(6).fill('render'));
  });
});
