import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pngBytes } from '../support/image-host.ts';
import { testVideo } from '../support/media-probe.ts';
import { startOpenAiFake } from '../support/openai-fake.ts';
import { startTestService, waitForGeneration, type TestService } from '../support/app.ts';

const OPENAI_KEY = 'sk-test-openai-9c2e41f0a7';
let openai: Awaited<ReturnType<typeof startOpenAiFake>>;
let video: Buffer;
let png: Buffer;
let svc: TestService;
let t: Awaited<ReturnType<TestService['team']>>;

beforeAll(async () => {
  video = await testVideo({ width: 320, height: 180, seconds: 1 });
  png = await pngBytes(32, 32, '#cc3366');
  openai = await startOpenAiFake({ key: OPENAI_KEY, video, png, pollsUntilDone: 2 });
  svc = await startTestService(
    // Sora is not routed here: OpenAI shut its Videos API down on 2026-09-24 and the start refuses such a route
    // (its code path is tested against the fake in test/integration/openai-engine.test.ts).
    { OPENAI_API_KEY: OPENAI_KEY, OPENAI_BASE_URL: openai.url, OPENAI_IMAGE_MODELS: 'gpt-2=gpt-image-2-2026-04-21', ENGINE_ROUTES: 'gpt-2=openai,gpt-2.5=openai,*=local', UPSTREAM_POLL_MS: '40' },
    { worker: true },
  );
  t = await svc.team({ credits: 100_000 });
});
afterAll(async () => {
  await svc?.close();
  await openai?.close();
});

const used = async () => (await svc.app.db.selectFrom('teams').select('credits_used').where('id', '=', t.teamId).executeTakeFirstOrThrow()).credits_used;
const post = (path: string, body: Record<string, unknown>) => svc.api('POST', `/api/v1${path}`, { key: t.key, body });

describe('GPT images on the OpenAI Images API', () => {
  it('text-to-image with quantity 2 makes two images in one call, stored as ours', async () => {
    const res = await post('/images/text-to-image', { model: 'gpt-2.5', prompt: 'two mugs', aspect_ratio: '16:9', quantity: 2, effort: 'xhigh' });
    expect(res.status).toBe(202);
    const g = await waitForGeneration(svc, t.key, res.body.generation_id);
    expect(g.status).toBe('completed');
    expect(openai.imageCreates.find((c) => c.prompt === 'two mugs')).toEqual({ model: 'gpt-image-2', prompt: 'two mugs', n: 2, size: '1536x1024', quality: 'high' });
    expect(g.result_urls).toHaveLength(2);
    for (const u of g.result_urls) expect((await svc.fetchUrl(u)).bytes.equals(png)).toBe(true);
  });

  it("gpt-2 at the default effort asks for medium quality, square, of the operator's OPENAI_IMAGE_MODELS choice", async () => {
    const res = await post('/images/text-to-image', { model: 'gpt-2', prompt: 'one square', aspect_ratio: '1:1' });
    expect((await waitForGeneration(svc, t.key, res.body.generation_id)).status).toBe('completed');
    expect(openai.imageCreates.find((c) => c.prompt === 'one square')).toEqual({ model: 'gpt-image-2-2026-04-21', prompt: 'one square', n: 1, size: '1024x1024', quality: 'medium' });
  });

  it('gpt-2.5 at 2k asks gpt-image-2 for the ratio at 2048 on its long side; 4k is a 400 at create', async () => {
    const res = await post('/images/text-to-image', { model: 'gpt-2.5', prompt: 'a wide banner', aspect_ratio: '21:9', resolution: '2k' });
    expect(res.status).toBe(202);
    expect((await waitForGeneration(svc, t.key, res.body.generation_id)).status).toBe('completed');
    expect(openai.imageCreates.find((c) => c.prompt === 'a wide banner')).toEqual({ model: 'gpt-image-2', prompt: 'a wide banner', n: 1, size: '2048x880', quality: 'medium' });
    const huge = await post('/images/text-to-image', { model: 'gpt-2.5', prompt: 'huge', aspect_ratio: '1:1', resolution: '4k' });
    expect(huge.status).toBe(400);
    expect(huge.body.error.message).toBe('resolution: gpt-2.5 on OpenAI makes 1k or 2k images, not 4k');
  });

  // A model of the standard sizes only (1k) is no longer served by OpenAI; that 400 is held in test/unit/openai-limits.test.ts.
  it('a 4k image is a 400 at create; a refusal fails and refunds', async () => {
    const before = await used();
    const big = await post('/images/text-to-image', { model: 'gpt-2', prompt: 'big', aspect_ratio: '1:1', resolution: '4k' });
    expect(big.status).toBe(400);
    expect(big.body.error.message).toBe('resolution: gpt-2 on OpenAI makes 1k or 2k images, not 4k');
    const res = await post('/images/text-to-image', { model: 'gpt-2', prompt: 'a forbidden thing', aspect_ratio: '1:1' });
    const g = await waitForGeneration(svc, t.key, res.body.generation_id);
    expect(g.status).toBe('failed');
    expect(g.error).toBe('OpenAI refused the request: Your request was rejected by the safety system.');
    expect(await used()).toBe(before);
  });

  it('nothing adforge sent broke the stored contract', () => {
    expect(openai.refused).toEqual([]);
  });

  it('never shows the OpenAI key', async () => {
    const rows = JSON.stringify(await svc.app.db.selectFrom('upstream_jobs').selectAll().execute());
    const events = JSON.stringify(await svc.app.db.selectFrom('upstream_job_events').selectAll().execute());
    for (const text of [svc.logLines.join('\n'), rows, events]) expect(text).not.toContain(OPENAI_KEY);
  });
});
