import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMetricsListener } from '../../src/http/metrics-route.ts';
import { startTestService, type TestService } from '../support/app.ts';
import { graphqlClient } from '../support/graphql-client.ts';

const TOKEN = 'metrics-token-0123456789';
let svc: TestService;
beforeAll(async () => {
  // No worker: a create's job stays queued, so the queue gauges have something to show.
  svc = await startTestService({ METRICS_TOKEN: TOKEN });
});
afterAll(() => svc?.close());

/** One sample's value from the Prometheus text, or undefined. */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const inside = /\{([^}]*)\}/.exec(line)?.[1] ?? '';
    if (want.every((w) => inside.split(',').includes(w))) return Number(line.split(' ').at(-1));
  }
  return undefined;
}

describe('GET /metrics', () => {
  it('on the main port only with METRICS_TOKEN as a bearer token', async () => {
    expect((await svc.api('GET', '/metrics')).status).toBe(401);
    expect((await svc.api('GET', '/metrics', { headers: { authorization: 'Bearer wrong-token-0123456789' } })).status).toBe(401);
    const res = await svc.api('GET', '/metrics', { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
  });

  it('counts HTTP requests by route pattern and status, GraphQL operations by type and outcome, and reads the pool and the job queue', async () => {
    const t = await svc.team();
    for (let i = 0; i < 3; i++) await svc.api('GET', '/api/v1/products', { key: t.key });
    await svc.api('GET', '/api/v1/products');
    const made = await svc.api('POST', '/api/v1/images/text-to-image', { key: t.key, body: { prompt: 'a mug', model: 'fast', aspect_ratio: '1:1' } });
    await svc.api('GET', `/api/v1/generations/${made.body.generation_id ?? made.body.id}`, { key: t.key });
    const g = await graphqlClient(svc);
    try {
      await g.gql('{ credits { credits_remaining } }', {}, t.key);
      await g.gql('{ credits { credits_remaining } }');
    } finally {
      await g.close();
    }
    const text = (await svc.api('GET', '/metrics', { headers: { authorization: `Bearer ${TOKEN}` } })).text;
    expect(sample(text, 'adforge_http_requests_total', { route: '/api/v1/products', method: 'GET', status: '200' })).toBe(3);
    expect(sample(text, 'adforge_http_requests_total', { route: '/api/v1/products', method: 'GET', status: '401' })).toBe(1);
    // The route's pattern, never the id in the URL.
    expect(sample(text, 'adforge_http_requests_total', { route: '/api/v1/generations/:id', method: 'GET', status: '200' })).toBe(1);
    expect(text).not.toMatch(/route="\/api\/v1\/generations\/[0-9a-f]{8}-/);
    expect(sample(text, 'adforge_http_request_duration_seconds_count', { route: '/api/v1/products', method: 'GET' })).toBe(4);
    expect(sample(text, 'adforge_graphql_operations_total', { type: 'query', outcome: 'ok' })).toBe(1);
    expect(sample(text, 'adforge_graphql_operations_total', { type: 'query', outcome: 'error' })).toBe(1);
    expect(sample(text, 'adforge_jobs_queued', { task: 'run_generation' })).toBe(1);
    expect(sample(text, 'adforge_jobs_running', { task: 'run_generation' })).toBe(0);
    expect(sample(text, 'adforge_jobs_oldest_queued_age_seconds', { task: 'run_generation' })).toBeGreaterThanOrEqual(0);
    expect(sample(text, 'adforge_db_pool_connections', { state: 'total' })).toBeGreaterThan(0);
    // The scrape's own queries may be holding or waiting for connections: these only have to be there.
    for (const state of ['idle', 'in_use', 'waiting']) expect(sample(text, 'adforge_db_pool_connections', { state })).toBeGreaterThanOrEqual(0);
    expect(sample(text, 'adforge_process_resident_memory_bytes', {})).toBeGreaterThan(0);
  });

  it('counts generations created and ended with their duration, credits debited and refunded, and webhook attempts by outcome', async () => {
    const { startWebhookReceiver } = await import('../support/webhook-receiver.ts');
    const receiver = await startWebhookReceiver();
    try {
      const scrape = async () => (await svc.api('GET', '/metrics', { headers: { authorization: `Bearer ${TOKEN}` } })).text;
      const before = await scrape();
      const at = (text: string, name: string, labels: Record<string, string> = {}) => sample(text, name, labels) ?? 0;
      const t = await svc.team();
      const made = await svc.api('POST', '/api/v1/images/text-to-image', { key: t.key, body: { prompt: 'a mug', model: 'gpt-2', aspect_ratio: '1:1', quantity: 2 } });
      expect(made.status).toBe(202);
      // Cancelled while processing (no worker here): failed and refunded.
      expect((await svc.api('POST', `/api/v1/generations/${made.body.generation_id}/cancel`, { key: t.key })).status).toBe(200);
      await svc.app.services.teams.setWebhook(t.keyId, receiver.url);
      expect((await svc.api('POST', '/api/v1/webhooks/test', { key: t.key })).status).toBe(201);
      const after = await scrape();
      const diff = (name: string, labels: Record<string, string> = {}) => at(after, name, labels) - at(before, name, labels);
      const credits = made.body.credits ?? (await svc.api('GET', `/api/v1/generations/${made.body.generation_id}`, { key: t.key })).body.credits;
      expect(diff('adforge_generations_created_total', { type: 'text-to-image', model: 'gpt-2' })).toBe(1);
      expect(diff('adforge_generations_ended_total', { type: 'text-to-image', model: 'gpt-2', engine: 'none', status: 'failed' })).toBe(1);
      expect(diff('adforge_generation_duration_seconds_count', { type: 'text-to-image', engine: 'none', status: 'failed' })).toBe(1);
      expect(diff('adforge_credits_debited_total')).toBe(credits);
      expect(diff('adforge_credits_refunded_total')).toBe(credits);
      expect(diff('adforge_webhook_deliveries_total', { outcome: 'delivered' })).toBe(1);
    } finally {
      await receiver.close();
    }
  });

  it('counts open subscriptions and measures how long a change took to reach this process', async () => {
    const t = await svc.team();
    const g = await graphqlClient(svc);
    const client = g.ws(t.key);
    const seen: unknown[] = [];
    const stop = client.subscribe({ query: 'subscription { generationsUpdated { id status } }' }, { next: (v) => void seen.push(v), error: () => {}, complete: () => {} });
    try {
      await expect.poll(() => svc.app.events.subscriberCount, { timeout: 5000 }).toBeGreaterThan(0);
      const before = sample(await svc.app.metrics.registry.metrics(), 'adforge_event_bus_lag_seconds_count', {}) ?? 0;
      const made = await svc.api('POST', '/api/v1/images/text-to-image', { key: t.key, body: { prompt: 'a mug', model: 'fast', aspect_ratio: '1:1' } });
      await svc.api('POST', `/api/v1/generations/${made.body.generation_id}/cancel`, { key: t.key });
      await expect.poll(() => seen.length, { timeout: 5000 }).toBeGreaterThan(0);
      const text = await svc.app.metrics.registry.metrics();
      expect(sample(text, 'adforge_subscriptions_open', {})).toBeGreaterThan(0);
      expect(sample(text, 'adforge_event_bus_lag_seconds_count', {})).toBeGreaterThan(before);
    } finally {
      stop();
      await client.dispose();
      await g.close();
    }
  });

  it('without METRICS_TOKEN there is no /metrics on the main port; METRICS_PORT serves it on its own listener', async () => {
    const plain = await startTestService();
    try {
      expect((await plain.api('GET', '/metrics', { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(404);
      const listener = await startMetricsListener(plain.app.metrics, { host: '127.0.0.1', port: 0 });
      try {
        const res = await request(`http://127.0.0.1:${listener.port}/metrics`);
        expect(res.statusCode).toBe(200);
        expect(await res.body.text()).toContain('adforge_db_pool_connections{state="total"}');
        const other = await request(`http://127.0.0.1:${listener.port}/`);
        expect(other.statusCode).toBe(404);
        await other.body.dump();
        await expect(startMetricsListener(plain.app.metrics, { host: '127.0.0.1', port: listener.port })).rejects.toThrow(`METRICS_PORT ${listener.port} on 127.0.0.1 is taken by another program`);
      } finally {
        await listener.close();
      }
    } finally {
      await plain.close();
    }
  });

  it('a listener off loopback answers only with METRICS_TOKEN as a bearer token, and does not start without one', async () => {
    await expect(startMetricsListener(svc.app.metrics, { host: '0.0.0.0', port: 0 })).rejects.toThrow(/METRICS_TOKEN/);
    const listener = await startMetricsListener(svc.app.metrics, { host: '0.0.0.0', port: 0, token: TOKEN });
    try {
      const get = async (authorization?: string) => {
        const res = await request(`http://127.0.0.1:${listener.port}/metrics`, { headers: authorization ? { authorization } : {} });
        return { status: res.statusCode, text: await res.body.text() };
      };
      expect((await get()).status).toBe(401);
      expect((await get('Bearer wrong-token-0123456789')).status).toBe(401);
      const ok = await get(`Bearer ${TOKEN}`);
      expect(ok.status).toBe(200);
      expect(ok.text).toContain('adforge_db_pool_connections{state="total"}');
    } finally {
      await listener.close();
    }
  });
});
