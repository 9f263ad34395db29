import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, waitForGeneration, type TestService } from '../support/app.ts';
import { waitUntil } from '../support/cli-run.ts';
import { startOtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver.ts';
import { startWebhookReceiver } from '../support/webhook-receiver.ts';
import { startFalFake, type FalFake } from '../support/fal-fake.ts';
import { testVideo } from '../support/media-probe.ts';

// OTEL_EXPORTER_OTLP_ENDPOINT set: spans go to an in-process OTLP/HTTP receiver. (Tracing is
// process-wide; vitest runs each test file in a process of its own.)

let otlp: Awaited<ReturnType<typeof startOtlpReceiver>>;
let hook: Awaited<ReturnType<typeof startWebhookReceiver>>;
let svc: TestService;
let fal: FalFake;
const FAL_KEY = 'fal-test-key-7f3c9e2b:1d4a8c6e0b5f';

beforeAll(async () => {
  otlp = await startOtlpReceiver();
  hook = await startWebhookReceiver();
  fal = await startFalFake({ key: FAL_KEY, video: await testVideo({ width: 320, height: 180, seconds: 1 }), pollsUntilDone: 1 });
  svc = await startTestService(
    {
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint,
      OTEL_SERVICE_NAME: 'adforge-test',
      OTEL_BSP_SCHEDULE_DELAY: '100',
      FAL_KEY,
      FAL_QUEUE_URL: fal.url,
      ENGINE_ROUTES: 'kling-2.6=fal,*=local',
      UPSTREAM_POLL_MS: '40',
    },
    { worker: true },
  );
});
afterAll(async () => {
  await svc?.close();
  await hook?.close();
  await fal?.close();
  await otlp?.close();
});

const SERVER = 2;
const CLIENT = 3;
const CONSUMER = 5;

describe('OpenTelemetry traces over OTLP', () => {
  it('one trace from the create request through its job, the engine, storage and the webhook, each span naming the generation', async () => {
    const t = await svc.team({ credits: 100 });
    await svc.app.services.teams.setWebhook(t.keyId, hook.url);
    const res = await svc.api('POST', '/api/v1/images/text-to-image', { key: t.key, body: { model: 'fast', prompt: 'traced', aspect_ratio: '1:1' } });
    expect(res.status).toBe(202);
    const id = res.body.generation_id as string;
    expect((await waitForGeneration(svc, t.key, id)).status).toBe('completed');
    await waitUntil(() => hook.received.length === 1, 20_000, 'the webhook');

    const named = (name: string) => otlp.spans.find((s) => s.name === name && s.attributes['adforge.generation_id'] === id);
    // Spans are exported as they end, in batches: the webhook's can arrive before the job that queued it ends.
    const spans = ['POST /api/v1/images/text-to-image', 'job run_generation', 'engine.run', 'storage.put', 'job deliver_webhook', 'webhook.deliver'];
    await waitUntil(() => spans.every((name) => Boolean(named(name))), 20_000, 'every span of the generation to be exported');

    const request = named('POST /api/v1/images/text-to-image')!;
    expect(request).toMatchObject({ service: 'adforge-test', kind: SERVER, parentSpanId: undefined });
    expect(request.attributes).toMatchObject({ 'http.request.method': 'POST', 'http.route': '/api/v1/images/text-to-image', 'http.response.status_code': 202 });

    const trace = otlp.spans.filter((s) => s.traceId === request.traceId);
    const byId = new Map(trace.map((s) => [s.spanId, s]));
    const chain = (s: ReceivedSpan): string[] => (s.parentSpanId ? [...chain(byId.get(s.parentSpanId)!), s.name] : [s.name]);

    const job = named('job run_generation')!;
    expect(job).toMatchObject({ traceId: request.traceId, kind: CONSUMER, parentSpanId: request.spanId });
    expect(chain(named('engine.run')!)).toEqual(['POST /api/v1/images/text-to-image', 'job run_generation', 'engine.run']);
    expect(named('engine.run')!.attributes['adforge.engine']).toBe('local');
    expect(chain(named('storage.put')!)).toEqual(['POST /api/v1/images/text-to-image', 'job run_generation', 'storage.put']);
    const webhook = named('webhook.deliver')!;
    expect(webhook).toMatchObject({ traceId: request.traceId, kind: CLIENT });
    expect(webhook.attributes['adforge.outcome']).toBe('200');
    expect(chain(webhook)).toEqual(['POST /api/v1/images/text-to-image', 'job run_generation', 'job deliver_webhook', 'webhook.deliver']);
    expect(otlp.requests.every((r) => r.path === '/v1/traces' && r.contentType?.startsWith('application/json'))).toBe(true);
  });

  it("a generation made upstream: the provider's calls are client spans of the trace, under the jobs that made them", async () => {
    const t = await svc.team({ credits: 1000 });
    const res = await svc.api('POST', '/api/v1/videos/ai-video', { key: t.key, body: { model: 'kling-2.6', prompt: 'traced upstream', aspect_ratio: '16:9', duration: 5 } });
    expect(res.status).toBe(202);
    const id = res.body.generation_id as string;
    expect((await waitForGeneration(svc, t.key, id)).status).toBe('completed');
    const request = () => otlp.spans.find((s) => s.name === 'POST /api/v1/videos/ai-video' && s.attributes['adforge.generation_id'] === id);
    await waitUntil(() => Boolean(request()) && otlp.spans.some((s) => s.name === 'job poll_upstream' && s.attributes['adforge.generation_id'] === id), 20_000, 'the upstream spans');
    const calls = otlp.spans.filter((s) => s.traceId === request()!.traceId && s.attributes['adforge.provider'] === 'fal');
    expect(calls.length).toBeGreaterThanOrEqual(2); // the submit and at least one status or result read
    expect(calls.every((c) => c.kind === CLIENT && c.name.startsWith('fal ') && typeof c.attributes['http.response.status_code'] === 'number')).toBe(true);
    expect(calls.some((c) => c.attributes['http.request.method'] === 'POST')).toBe(true);
  });

  it('a refused request is traced as its answer, an error status for a 5xx only, and queues nothing', async () => {
    const t = await svc.team();
    const res = await svc.api('POST', '/api/v1/images/text-to-image', { key: t.key, body: { model: 'nope', prompt: 'x' } });
    expect(res.status).toBe(400);
    const requestId = res.headers['x-request-id'] as string;
    await waitUntil(() => otlp.spans.some((s) => s.attributes['adforge.request_id'] === requestId), 10_000, 'the refused request span');
    const span = otlp.spans.find((s) => s.attributes['adforge.request_id'] === requestId)!;
    expect(span.attributes['http.response.status_code']).toBe(400);
    expect(span.status?.code ?? 0).not.toBe(2);
    expect(otlp.spans.filter((s) => s.traceId === span.traceId)).toHaveLength(1);
  });
});
