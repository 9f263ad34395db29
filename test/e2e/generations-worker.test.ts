import { createHmac, timingSafeEqual } from 'node:crypto';
import { sql } from 'kysely';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, waitForGeneration, type TestService } from '../support/app.ts';
import { pngBytes, sendBytes, startImageHost } from '../support/image-host.ts';
import { videoInfo } from '../support/media-probe.ts';
import { startWebhookReceiver } from '../support/webhook-receiver.ts';
import { VOICES } from '../../src/domain/catalogue/voices.ts';

const VOICE_ID = VOICES[0]!.id;

let svc: TestService;
let host: Awaited<ReturnType<typeof startImageHost>>;
let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;

beforeAll(async () => {
  svc = await startTestService({ GENERATION_MAX_ATTEMPTS: '2' }, { worker: true });
  host = await startImageHost({ '/p.png': sendBytes(await pngBytes(300, 300, '#884422'), 'image/png') });
  receiver = await startWebhookReceiver();
});
afterAll(async () => {
  await receiver?.close();
  await host?.close();
  await svc?.close();
});

const used = async (teamId: string) =>
  (await svc.app.db.selectFrom('teams').select('credits_used').where('id', '=', teamId).executeTakeFirstOrThrow()).credits_used;

async function teamWithWebhook(credits = 200) {
  const t = await svc.team({ credits });
  await svc.app.services.teams.setWebhook(t.keyId, receiver.url);
  return t;
}

describe('the worker', () => {
  it('renders a real ai-video: H.264 at the requested size and duration', async () => {
    const t = await svc.team({ credits: 200 });
    const res = await svc.api('POST', '/api/v1/videos/ai-video', {
      key: t.key,
      body: { model: 'seedance-2.0-fast', prompt: 'a lighthouse at dusk', aspect_ratio: '9:16', duration: 4, resolution: '480p' },
    });
    expect(res.status).toBe(202);
    const done = await waitForGeneration(svc, t.key, res.body.generation_id);
    expect(done.status).toBe('completed');
    const file = await svc.fetchUrl(done.result_url);
    expect(file.headers['content-type']).toBe('video/mp4');
    const info = await videoInfo(file.bytes);
    expect(info.videoCodec).toBe('h264');
    expect([info.width, info.height]).toEqual([480, 854]);
    expect(Math.abs(info.durationSeconds! - 4)).toBeLessThanOrEqual(0.1);
    expect(done.details).toMatchObject({ model: 'seedance-2.0-fast', duration: 4, aspect_ratio: '9:16' });
  });

  it('edits a completed video (generation_id): the source streams from storage into the render, the edit keeps its size and length', async () => {
    const t = await svc.team({ credits: 400 });
    const source = await svc.api('POST', '/api/v1/videos/ai-video', {
      key: t.key,
      body: { model: 'seedance-2.0-fast', prompt: 'a harbour at noon', aspect_ratio: '9:16', duration: 4, resolution: '480p', generate_audio: true },
    });
    expect((await waitForGeneration(svc, t.key, source.body.generation_id)).status).toBe('completed');
    const res = await svc.api('POST', '/api/v1/videos/edit', { key: t.key, body: { template_id: 'bold-pop', generation_id: source.body.generation_id } });
    expect(res.status).toBe(202);
    const done = await waitForGeneration(svc, t.key, res.body.generation_id);
    expect(done.status).toBe('completed');
    const info = await videoInfo((await svc.fetchUrl(done.result_url)).bytes);
    expect([info.videoCodec, info.audioCodec, info.width, info.height]).toEqual(['h264', 'aac', 480, 854]);
    expect(Math.abs(info.durationSeconds! - 4)).toBeLessThanOrEqual(0.1);
    expect(done.details.duration).toBeCloseTo(info.durationSeconds!, 1);
  });

  it('renders a talking avatar from the avatar image with a voice track and reports its duration', async () => {
    const t = await svc.team({ credits: 200 });
    const avatars = await svc.api('GET', '/api/v1/avatars', { key: t.key });
    const res = await svc.api('POST', '/api/v1/videos/talking-avatar', {
      key: t.key,
      body: { avatar_id: avatars.body.data[0].id, avatar_type: 'platform', script: 'Meet the new trail shoe. Light, tough, ready.', voice_id: VOICE_ID },
    });
    const done = await waitForGeneration(svc, t.key, res.body.generation_id);
    expect(done.status).toBe('completed');
    const info = await videoInfo((await svc.fetchUrl(done.result_url)).bytes);
    expect(info.videoCodec).toBe('h264');
    expect(info.audioCodec).toBe('aac');
    expect(done.details.duration).toBeCloseTo(info.durationSeconds!, 1);
  });

  it('product shots draw on the product image and come back at the requested size', async () => {
    const t = await svc.team({ credits: 200 });
    const product = await svc.api('POST', '/api/v1/products', { key: t.key, body: { name: 'Vase', description: 'd', category: 'home', image_url: host.url('/p.png') } });
    const res = await svc.api('POST', '/api/v1/images/product-shots', {
      key: t.key,
      body: { model: 'fast', aspect_ratio: '4:5', resolution: '2k', quantity: 3, product_id: product.body.id, style_id: 'neon-night' },
    });
    const done = await waitForGeneration(svc, t.key, res.body.generation_id);
    expect(done.status).toBe('completed');
    expect(done.result_urls).toHaveLength(3);
    for (const url of done.result_urls) {
      const meta = await sharp((await svc.fetchUrl(url)).bytes).metadata();
      expect([meta.format, meta.width, meta.height]).toEqual(['png', 1638, 2048]);
    }
  });

  it('a failing engine fails the generation with an error and refunds, in one go', async () => {
    const t = await teamWithWebhook();
    const res = await svc.api('POST', '/api/v1/images/text-to-image', { key: t.key, body: { model: 'pro', prompt: 'please [[fail]]', aspect_ratio: '1:1', quantity: 2 } });
    expect(await used(t.teamId)).toBe(4);
    const done = await waitForGeneration(svc, t.key, res.body.generation_id);
    expect(done.status).toBe('failed');
    expect(done.error).toMatch(/fail/);
    expect(done.result_url).toBeNull();
    expect(await used(t.teamId)).toBe(0);
    const ledger = await svc.app.db.selectFrom('credit_ledger').select(['kind', 'amount']).where('subject_id', '=', res.body.generation_id).orderBy('id').execute();
    expect(ledger).toEqual([{ kind: 'debit', amount: 4 }, { kind: 'refund', amount: -4 }]);
  });

  it('retries a transient failure, then fails and refunds after the last attempt', async () => {
    const t = await svc.team({ credits: 50 });
    const res = await svc.api('POST', '/api/v1/images/text-to-image', { key: t.key, body: { model: 'fast', prompt: 'wobbly [[flaky]]', aspect_ratio: '1:1' } });
    const done = await waitForGeneration(svc, t.key, res.body.generation_id, 30_000);
    expect(done.status).toBe('failed');
    const job = await sql<{ attempts: number }>`select attempts from graphile_worker._private_jobs where key = ${`generation:${res.body.generation_id}`}`.execute(svc.app.db);
    // The job row is gone once it ended; its attempts show in the worker's log instead.
    expect(job.rows.length === 0 || job.rows[0]!.attempts === 2).toBe(true);
    const attempts = svc.logLines.filter((l) => l.includes(res.body.generation_id) && l.includes('generation attempt failed'));
    expect(attempts).toHaveLength(2);
    expect(await used(t.teamId)).toBe(0);
  });

  it('the sweeper fails and refunds a generation past its deadline', async () => {
    const t = await svc.team({ credits: 50 });
    const res = await svc.api('POST', '/api/v1/videos/ai-video', {
      key: t.key,
      body: { model: 'kling-2.6', prompt: 'never finishes', aspect_ratio: '1:1', duration: 5 },
    });
    // Take the job away so only the sweeper can end it, then move its deadline into the past.
    await sql`delete from graphile_worker._private_jobs where key = ${`generation:${res.body.generation_id}`}`.execute(svc.app.db);
    await svc.app.db.updateTable('generations').set({ deadline_at: new Date(Date.now() - 1000) }).where('id', '=', res.body.generation_id).execute();
    expect(await used(t.teamId)).toBe(15);
    await sql`select graphile_worker.add_job('sweep_generations', '{}'::json)`.execute(svc.app.db);
    const done = await waitForGeneration(svc, t.key, res.body.generation_id, 15_000);
    expect(done.status).toBe('failed');
    expect(done.error).toMatch(/timed out/);
    expect(await used(t.teamId)).toBe(0);
  });
});

describe('webhooks', () => {
  const verify = (raw: Buffer, secret: string, signature: string) => {
    const expected = createHmac('sha256', secret).update(raw).digest();
    const given = Buffer.from(signature, 'hex');
    return given.length === expected.length && timingSafeEqual(given, expected);
  };

  it('POSTs generation.completed with the spec body, signed over the raw bytes', async () => {
    const t = await teamWithWebhook();
    const res = await svc.api('POST', '/api/v1/images/text-to-image', { key: t.key, body: { model: 'fast', prompt: 'hook me', aspect_ratio: '1:1' } });
    const done = await waitForGeneration(svc, t.key, res.body.generation_id);
    await expect.poll(() => receiver.received.filter((r) => r.raw.includes(res.body.generation_id)).length, { timeout: 10_000 }).toBe(1);
    const hit = receiver.received.find((r) => r.raw.includes(res.body.generation_id))!;
    expect(verify(hit.raw, t.webhookSecret, String(hit.headers['x-service-signature']))).toBe(true);
    expect(verify(hit.raw, 'whsec_wrong', String(hit.headers['x-service-signature']))).toBe(false);
    const body = JSON.parse(hit.raw.toString());
    expect(Object.keys(body)).toEqual(['event', 'generation_id', 'type', 'status', 'created_at', 'completed_at', 'result_url']);
    expect(body).toMatchObject({ event: 'generation.completed', generation_id: done.id, type: 'text-to-image', status: 'completed', created_at: done.created_at, completed_at: done.completed_at });
    expect((await svc.fetchUrl(body.result_url)).status).toBe(200);
    expect(hit.headers['x-service-event-id']).toBeTruthy();
    expect(hit.headers['x-service-timestamp']).toMatch(/^\d+$/);
  });

  it('POSTs generation.failed with error_message', async () => {
    const t = await teamWithWebhook();
    const res = await svc.api('POST', '/api/v1/images/text-to-image', { key: t.key, body: { model: 'fast', prompt: '[[fail]]', aspect_ratio: '1:1' } });
    await waitForGeneration(svc, t.key, res.body.generation_id);
    await expect.poll(() => receiver.received.filter((r) => r.raw.includes(res.body.generation_id)).length, { timeout: 10_000 }).toBe(1);
    const body = JSON.parse(receiver.received.find((r) => r.raw.includes(res.body.generation_id))!.raw.toString());
    expect(Object.keys(body)).toEqual(['event', 'generation_id', 'type', 'status', 'created_at', 'completed_at', 'error_message']);
    expect(body).toMatchObject({ event: 'generation.failed', status: 'failed' });
  });

  it('a receiver that is down gets one attempt, recorded; the generation is still completed', async () => {
    const t = await svc.team({ credits: 50 });
    await svc.app.services.teams.setWebhook(t.keyId, 'http://127.0.0.1:9/nobody-home');
    const res = await svc.api('POST', '/api/v1/images/text-to-image', { key: t.key, body: { model: 'fast', prompt: 'down', aspect_ratio: '1:1' } });
    const done = await waitForGeneration(svc, t.key, res.body.generation_id);
    expect(done.status).toBe('completed');
    const rows = () => svc.app.db.selectFrom('webhook_deliveries').selectAll().where('generation_id', '=', res.body.generation_id).execute();
    await expect.poll(async () => (await rows()).length, { timeout: 10_000 }).toBe(1);
    await new Promise((r) => setTimeout(r, 1500));
    const [row] = await rows();
    expect(row).toMatchObject({ ok: false, status_code: null, event: 'generation.completed' });
    expect(row!.error).toBeTruthy();
    expect(await rows()).toHaveLength(1);
  });

  it('a receiver answering after 11 s gets one attempt, cut at 10 s; the generation is unaffected', async () => {
    const slow = await startWebhookReceiver((res) => setTimeout(() => res.writeHead(200).end(), 11_000));
    try {
      const t = await svc.team({ credits: 50 });
      await svc.app.services.teams.setWebhook(t.keyId, slow.url);
      const res = await svc.api('POST', '/api/v1/images/text-to-image', { key: t.key, body: { model: 'fast', prompt: 'slow', aspect_ratio: '1:1' } });
      const done = await waitForGeneration(svc, t.key, res.body.generation_id);
      expect(done.status).toBe('completed');
      const rows = () => svc.app.db.selectFrom('webhook_deliveries').selectAll().where('generation_id', '=', res.body.generation_id).execute();
      await expect.poll(async () => (await rows()).length, { timeout: 15_000, interval: 500 }).toBe(1);
      const [row] = await rows();
      expect(row).toMatchObject({ ok: false });
      expect(row!.error).toMatch(/timed out/);
      expect(row!.latency_ms).toBeGreaterThanOrEqual(9_900);
      expect(row!.latency_ms).toBeLessThan(11_000);
      expect(slow.received).toHaveLength(1);
    } finally {
      await slow.close();
    }
  }, 30_000);
});
