import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFalFake, type FalFake } from '../support/fal-fake.ts';
import { testVideo } from '../support/media-probe.ts';
import { startTestService, waitForGeneration, type TestService } from '../support/app.ts';

// Jobs waiting upstream hold no worker slot: two workers carry 200 of them and still start local work at once.
const FAL_KEY = 'fal-many-waiting-key';
const MANY = 200;
let fal: FalFake;
let svc: TestService;
let t: Awaited<ReturnType<TestService['team']>>;

beforeAll(async () => {
  fal = await startFalFake({ key: FAL_KEY, video: await testVideo({ width: 160, height: 90, seconds: 1, audio: false }), pollsUntilDone: 3 });
  svc = await startTestService(
    { FAL_KEY, FAL_QUEUE_URL: fal.url, ENGINE_ROUTES: 'veo-3.1=fal,*=local', UPSTREAM_POLL_MS: '300', WORKER_CONCURRENCY: '2' },
    { worker: true },
  );
  t = await svc.team({ credits: 1_000_000 });
});
afterAll(async () => {
  await svc?.close();
  await fal?.close();
});

describe('many generations waiting upstream', () => {
  it(`${MANY} waiting with WORKER_CONCURRENCY=2 all complete, each submitted once; a local generation behind them completes while they wait`, async () => {
    const ids: string[] = [];
    for (let i = 0; i < MANY; i++) {
      const res = await svc.api('POST', '/api/v1/videos/ai-video', { key: t.key, body: { model: 'veo-3.1', prompt: `wave ${i}`, aspect_ratio: '16:9', duration: 4 } });
      expect(res.status).toBe(202);
      ids.push(res.body.generation_id);
    }
    const local = await svc.api('POST', '/api/v1/images/text-to-image', { key: t.key, body: { model: 'fast', prompt: 'local behind them', aspect_ratio: '1:1' } });
    const localDone = await waitForGeneration(svc, t.key, local.body.generation_id, 120_000);
    expect(localDone.status).toBe('completed');
    const stillWaiting = await svc.app.db.selectFrom('generations').select((eb) => eb.fn.countAll<string>().as('n')).where('id', 'in', ids).where('status', '=', 'processing').executeTakeFirstOrThrow();
    expect(Number(stillWaiting.n)).toBeGreaterThan(0);

    for (const id of ids) expect((await waitForGeneration(svc, t.key, id, 240_000)).status).toBe('completed');
    expect(fal.submits).toHaveLength(MANY);
    expect(new Set(fal.submits.map((s) => s.input.prompt)).size).toBe(MANY);
  }, 300_000);
});
