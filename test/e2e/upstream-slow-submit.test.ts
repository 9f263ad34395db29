import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pngBytes } from '../support/image-host.ts';
import { startOpenAiFake } from '../support/openai-fake.ts';
import { startTestService, waitForGeneration, type TestService } from '../support/app.ts';

/*
 * A submit is bounded by its provider's own call timeout and the generation's deadline, nothing
 * shorter: an OpenAI image that takes more than a minute (its SDK waits ten) is made once and
 * delivered. The upstream core once cut every submit at 60 s, past which the image, made and
 * billed by OpenAI all the same, was lost and the generation failed. The wait is the test.
 */
const KEY = 'sk-slow-submit-4e1';
let openai: Awaited<ReturnType<typeof startOpenAiFake>>;
let svc: TestService;
let t: Awaited<ReturnType<TestService['team']>>;

beforeAll(async () => {
  openai = await startOpenAiFake({ key: KEY, video: Buffer.from('mp4'), png: await pngBytes(16, 16, '#884422'), imageMs: 65_000 });
  svc = await startTestService({ OPENAI_API_KEY: KEY, OPENAI_BASE_URL: openai.url, ENGINE_ROUTES: 'gpt-2=openai,*=local', UPSTREAM_POLL_MS: '40' }, { worker: true });
  t = await svc.team({ credits: 1_000 });
});
afterAll(async () => {
  await svc?.close();
  await openai?.close();
});

describe('a submit that takes longer than a minute', () => {
  it('an OpenAI image made in 65 s completes, made and billed once', async () => {
    const res = await svc.api('POST', '/api/v1/images/text-to-image', { key: t.key, body: { model: 'gpt-2', prompt: 'a slow, careful image', aspect_ratio: '1:1' } });
    expect(res.status).toBe(202);
    const g = await waitForGeneration(svc, t.key, res.body.generation_id, 100_000);
    expect(g.status, g.error).toBe('completed');
    expect(openai.imageCreates.filter((c) => c.prompt === 'a slow, careful image')).toHaveLength(1);
    expect(openai.billedImages.filter((b) => b.prompt === 'a slow, careful image')).toHaveLength(1);
  }, 120_000);
});
