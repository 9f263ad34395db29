import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, waitForGeneration, type TestService } from '../support/app.ts';

let svc: TestService;
let team: Awaited<ReturnType<TestService['team']>>;

beforeAll(async () => {
  svc = await startTestService({}, { worker: true });
  team = await svc.team({ credits: 100 });
});
afterAll(() => svc?.close());

describe('an image generation from create to result', () => {
  it('answers 202 processing, debits, renders real PNGs and completes', async () => {
    const res = await svc.api('POST', '/api/v1/images/text-to-image', {
      key: team.key,
      body: { model: 'pro', prompt: 'A red sneaker on a beach', aspect_ratio: '16:9', quantity: 2, resolution: '1k' },
    });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ generation_id: expect.any(String), type: 'text-to-image', status: 'processing' });
    const credits = await svc.api('GET', '/api/v1/account/credits', { key: team.key });
    expect(credits.body.credits_used).toBe(4);
    const done = await waitForGeneration(svc, team.key, res.body.generation_id);
    expect(done.status).toBe('completed');
    expect(done.result_urls).toHaveLength(2);
    expect(done.result_url).toBe(done.result_urls[0]);
    for (const url of done.result_urls) {
      const img = await svc.fetchUrl(url);
      expect(img.status).toBe(200);
      const meta = await sharp(img.bytes).metadata();
      expect([meta.format, meta.width, meta.height]).toEqual(['png', 1024, 576]);
    }
    expect(done.details).toMatchObject({ prompt: 'A red sneaker on a beach', model: 'pro', aspect_ratio: '16:9', resolution: '1k', quantity: 2 });
  });
});
