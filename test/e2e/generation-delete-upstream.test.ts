import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFalFake, type FalFake } from '../support/fal-fake.ts';
import { startTestService, type TestService } from '../support/app.ts';
import { testVideo } from '../support/media-probe.ts';

const FAL_KEY = 'fal-test-key-7f3c9e2b:1d4a8c6e0b5f';
let fal: FalFake;
let svc: TestService;

// The job waits at fal far longer than the test: its next look (UPSTREAM_POLL_MS) never comes here,
// so only the delete itself can tell fal to stop.
beforeAll(async () => {
  fal = await startFalFake({ key: FAL_KEY, video: await testVideo({ width: 320, height: 180, seconds: 1 }), pollsUntilDone: 1000 });
  svc = await startTestService({ FAL_KEY, FAL_QUEUE_URL: fal.url, ENGINE_ROUTES: 'veo-3.1=fal,*=local', UPSTREAM_POLL_MS: '600000' }, { worker: true });
});
afterAll(async () => {
  await svc?.close();
  await fal?.close();
});

describe('deleting a generation whose provider job is still live', () => {
  it('asks the provider to stop the job it no longer has a row for, and deletes the job with its events', async () => {
    const t = await svc.team({ credits: 100_000 });
    const res = await svc.api('POST', '/api/v1/videos/ai-video', { key: t.key, body: { model: 'veo-3.1', prompt: 'a job to drop', aspect_ratio: '16:9', duration: 4 } });
    expect(res.status).toBe(202);
    const id = res.body.generation_id;
    for (let i = 0; i < 200 && !fal.submits.some((s) => s.input.prompt === 'a job to drop'); i++) await new Promise((r) => setTimeout(r, 50));
    const sent = fal.submits.find((s) => s.input.prompt === 'a job to drop')!;
    expect(sent).toBeTruthy();
    const submitted = async () => (await sql<{ n: number }>`select count(*)::int as n from upstream_jobs where generation_id = ${id} and state = 'submitted'`.execute(svc.app.db)).rows[0]!.n;
    for (let i = 0; i < 200 && (await submitted()) === 0; i++) await new Promise((r) => setTimeout(r, 50));
    expect(await submitted()).toBe(1);
    const job = (await sql<{ id: string }>`select id from upstream_jobs where generation_id = ${id}`.execute(svc.app.db)).rows[0]!.id;
    const eventsOf = async () => (await sql<{ n: number }>`select count(*)::int as n from upstream_job_events where upstream_job_id = ${job}`.execute(svc.app.db)).rows[0]!.n;
    expect(await eventsOf()).toBeGreaterThan(0);

    // It ends without a look at fal (the deadline sweeper's way), then is deleted at once.
    expect(await svc.app.services.lifecycle.fail(id, 'timed out: the generation did not finish in time')).toBeTruthy();
    expect((await svc.api('DELETE', `/api/v1/generations/${id}`, { key: t.key })).status).toBe(204);
    expect(fal.cancels).toContain(sent.requestId);
    expect(await submitted()).toBe(0);
    expect(await eventsOf()).toBe(0);
    expect((await sql<{ n: number }>`select count(*)::int as n from upstream_jobs where id = ${job}`.execute(svc.app.db)).rows[0]!.n).toBe(0);
  }, 60_000);
});
