import { createAdforgeClient, type AdforgeClient, type Schemas } from '@adforge/client';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadTls } from '../../src/http/tls.ts';
import { startTestService, type TestService } from '../support/app.ts';

// The typed client of clients/typescript, installed as the package @adforge/client, against a
// running server over TLS: what a TypeScript integrator writes.
let svc: TestService;
let dispatcher: Agent;
beforeAll(async () => {
  svc = await startTestService();
  dispatcher = new Agent({ connect: { ca: (await loadTls(svc.app.config)).cert } });
});
afterAll(async () => {
  await dispatcher?.close();
  await svc?.close();
});

const clientFor = (apiKey: string): AdforgeClient =>
  createAdforgeClient({ baseUrl: svc.baseUrl, apiKey, fetch: (request) => fetch(request, { dispatcher } as RequestInit) });

describe('@adforge/client', () => {
  it('reads, creates under an Idempotency-Key, polls, and reads errors in their shape', async () => {
    const t = await svc.team({ credits: 5 });
    const client = clientFor(t.key);

    const credits = await client.GET('/account/credits');
    expect(credits.data).toEqual({ credits_used: 0, credits_limit: 5, credits_remaining: 5 } satisfies Schemas['CreditBalance']);

    const voices = await client.GET('/voices', { params: { query: { limit: 2, offset: 1 } } });
    expect(voices.data?.data).toHaveLength(2);
    expect(voices.data?.pagination).toMatchObject({ limit: 2, offset: 1 });

    const body = { model: 'fast', prompt: 'a trail shoe on wet rock', aspect_ratio: '1:1', quantity: 2 } as const;
    const headers = { 'Idempotency-Key': 'client-order-1' };
    const first = await client.POST('/images/text-to-image', { body, params: { header: headers } });
    const again = await client.POST('/images/text-to-image', { body, params: { header: headers } });
    expect(first.response.status).toBe(202);
    expect(first.data).toEqual({ generation_id: expect.any(String), type: 'text-to-image', status: 'processing' });
    expect(again.data).toEqual(first.data);
    expect(again.response.headers.get('idempotent-replayed')).toBe('true');

    const generation = await client.GET('/generations/{id}', { params: { path: { id: first.data!.generation_id } } });
    expect(generation.data).toMatchObject({ id: first.data!.generation_id, status: 'processing', credits: 2, result_url: null });

    const tooMany = await client.POST('/images/text-to-image', { body: { ...body, quantity: 8 } });
    expect(tooMany.response.status).toBe(402);
    expect(tooMany.error?.error.code).toBe('insufficient_credits');
    const missing = await client.GET('/products/{id}', { params: { path: { id: '00000000-0000-4000-8000-000000000000' } } });
    expect([missing.response.status, missing.error?.error.code]).toEqual([404, 'not_found']);
    expect((await client.GET('/account/credits')).data?.credits_used).toBe(2);
  });

  it('a revoked or wrong key is a 401 in the same shape; the constructor refuses what is missing', async () => {
    const wrong = clientFor('service_sk_nope');
    const res = await wrong.GET('/account/credits');
    expect(res.response.status).toBe(401);
    expect(res.error?.error.code).toBe('unauthorized');
    expect(() => createAdforgeClient({ baseUrl: '', apiKey: 'x' })).toThrow(/baseUrl/);
    expect(() => createAdforgeClient({ baseUrl: svc.baseUrl, apiKey: '' })).toThrow(/apiKey/);
  });
});
