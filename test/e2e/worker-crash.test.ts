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
