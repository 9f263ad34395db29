import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFalFake, type FalFake } from '../support/fal-fake.ts';
import { testVideo } from '../support/media-probe.ts';
import { startTestService, waitForGeneration, type TestService } from '../support/app.ts';

/*
 * `veo-3.1=fal|local`: the local engine as a route's last resort goes through the same submit
 * path as the providers: it answers at once with the files, and nothing is recorded for it.
 */
let fal: FalFake;
let svc: TestService;
let t: Awaited<ReturnType<TestService['team']>>;

beforeAll(async () => {
  fal = await startFalFake({ key: 'fal-lf', video: await testVideo({ width: 160, height: 90, seconds: 1 }), pollsUntilDone: 1 });
  svc = await startTestService({ FAL_KEY: 'fal-lf', FAL_QUEUE_URL: fal.url, ENGINE_ROUTES: 'veo-3.1=fal|local,*=local', UPSTREAM_POLL_MS: '40' }, { worker: true });
  t = await svc.team({ credits: 100_000 });
});
afterAll(async () => {
  await svc?.close();
  await fal?.close();
});

const create = (prompt: string) => svc.api('POST', '/api/v1/videos/ai-video', { key: t.key, body: { model: 'veo-3.1', prompt, aspect_ratio: '16:9', duration: 4, resolution: '720p' } });
const attempts = (id: string) => svc.app.db.selectFrom('upstream_jobs').select(['provider', 'state', 'error']).where('generation_id', '=', id).orderBy('created_at').execute();

describe('the local engine at the end of a route', () => {
  it('a 503 at fal (nothing queued) moves the generation to the local engine, which renders it at once', async () => {
    fal.failNextSubmit({ status: 503, body: { detail: 'Service unavailable' } });
    const res = await create('falls back to local');
    const g = await waitForGeneration(svc, t.key, res.body.generation_id);
    expect(g.status, g.error).toBe('completed');
    expect(g.result_url).toBeTruthy();
    expect(fal.submits.filter((s) => s.input.prompt === 'falls back to local')).toHaveLength(0);
    expect(await attempts(res.body.generation_id)).toEqual([{ provider: 'fal', state: 'failed', error: 'fal answered 503; the next provider of the route was tried' }]);
  });

  it('a route that starts with the local engine records no provider attempt', async () => {
    const res = await svc.api('POST', '/api/v1/images/text-to-image', { key: t.key, body: { model: 'fast', prompt: 'only local', aspect_ratio: '1:1' } });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    const g = await waitForGeneration(svc, t.key, res.body.generation_id);
    expect(g.status, g.error).toBe('completed');
    expect(await attempts(res.body.generation_id)).toEqual([]);
  });
});
