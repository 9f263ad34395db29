import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnWorker, startTestService, waitForGeneration, type TestService } from '../support/app.ts';
import { waitUntil, type LongRunning } from '../support/cli-run.ts';

let svc: TestService;
const children: LongRunning[] = [];

beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => {
  for (const c of children) if (c.running()) c.child.kill('SIGKILL');
  await svc?.close();
});

// A separate `adforge worker` process on the service's database and files.
function worker(env: Record<string, string>) {
  const c = spawnWorker(svc, env);
  children.push(c);
  return c;
}

async function lockedBy(generationId: string): Promise<string | null> {
  const r = await sql<{ locked_by: string | null }>`select locked_by from graphile_worker._private_jobs where key = ${`generation:${generationId}`}`.execute(svc.app.db);
  return r.rows[0]?.locked_by ?? null;
}

describe('a worker killed with SIGKILL in the middle of a job', () => {
  it('leaves a generation that another worker finishes, charged once', async () => {
    const t = await svc.team({ credits: 100 });
    const first = worker({ LOCAL_ENGINE_DELAY_MS: '60000' });
    const res = await svc.api('POST', '/api/v1/videos/ai-video', {
      key: t.key,
      body: { model: 'kling-2.6', prompt: 'crash test', aspect_ratio: '1:1', duration: 5, resolution: '720p' },
    });
    expect(res.status).toBe(202);
    const id = res.body.generation_id as string;
    await waitUntil(async () => (await lockedBy(id)) !== null, 20_000, 'the first worker to take the job');
    first.child.kill('SIGKILL');
    await first.exited;
    expect(await lockedBy(id)).not.toBeNull();

    const second = worker({ LOCAL_ENGINE_DELAY_MS: '0' });
    const done = await waitForGeneration(svc, t.key, id, 40_000);
    expect(done.status).toBe('completed');
    const team = await svc.app.db.selectFrom('teams').select('credits_used').where('id', '=', t.teamId).executeTakeFirstOrThrow();
    expect(team.credits_used).toBe(15);
    const ledger = await svc.app.db.selectFrom('credit_ledger').select(['kind', 'amount']).where('subject_id', '=', id).execute();
    expect(ledger).toEqual([{ kind: 'debit', amount: 15 }]);
    expect((await svc.fetchUrl(done.result_url)).status).toBe(200);
    second.child.kill('SIGTERM');
    expect((await second.waitForExit(10_000))?.code).toBe(0);
  }, 90_000);
});

describe('graphile-worker stopping its pool by itself (a job’s end it cannot record)', () => {
  it('the worker process starts a new runner: the job is taken again once the old pool stops beating, finished, charged once; new jobs run', async () => {
    const t = await svc.team({ credits: 100 });
    // Recording a job's end deletes its row: refused here, so graphile-worker finds the queue in a
    // state it cannot record and shuts its pool down, as after a failure it does not retry.
    await sql`create function pg_temp_refuse() returns trigger language plpgsql as $$ begin raise exception 'refused by the test'; end $$`.execute(svc.app.db);
    await sql`create trigger refuse_job_end before delete on graphile_worker._private_jobs for each row execute function pg_temp_refuse()`.execute(svc.app.db);
    const w = worker({ LOCAL_ENGINE_DELAY_MS: '0', LOG_LEVEL: 'error' });
    try {
      const create = (prompt: string) => svc.api('POST', '/api/v1/images/text-to-image', { key: t.key, body: { prompt, model: 'fast', aspect_ratio: '1:1' } });
      const first = await create('the first mug');
      expect(first.status).toBe(202);
      const id = first.body.generation_id as string;
      await waitUntil(async () => /the job worker stopped by itself/.test(w.output().stdout), 30_000, 'the runner to stop by itself');
      await sql`drop trigger refuse_job_end on graphile_worker._private_jobs`.execute(svc.app.db);

      const done = await waitForGeneration(svc, t.key, id, 30_000);
      expect(done.status).toBe('completed');
      await waitUntil(async () => (await lockedBy(id)) === null && !(await jobExists(id)), 30_000, 'the job to be recorded as done by the new runner');
      expect(w.running()).toBe(true);
      const second = await create('the second mug');
      expect((await waitForGeneration(svc, t.key, second.body.generation_id, 30_000)).status).toBe('completed');
      const ledger = await svc.app.db.selectFrom('credit_ledger').select(['kind']).where('subject_id', '=', id).execute();
      expect(ledger).toEqual([{ kind: 'debit' }]);
      w.child.kill('SIGTERM');
      expect((await w.waitForExit(10_000))?.code).toBe(0);
    } finally {
      await sql`drop trigger if exists refuse_job_end on graphile_worker._private_jobs`.execute(svc.app.db);
    }
  }, 120_000);
});

async function jobExists(generationId: string): Promise<boolean> {
  const r = await sql`select 1 from graphile_worker._private_jobs where key = ${`generation:${generationId}`}`.execute(svc.app.db);
  return r.rows.length > 0;
}
