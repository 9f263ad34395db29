import { generateKeyPairSync } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFalHookVerifier } from '../../src/adapters/engines/fal/webhook.ts';
import { startFalFake, type FalFake } from '../support/fal-fake.ts';
import { testVideo } from '../support/media-probe.ts';
import { startTestService, waitForGeneration, type TestService } from '../support/app.ts';

// Polls are a minute apart here: only fal's webhook can finish a generation within seconds.
const FAL_KEY = 'fal-hooks-test-key';
let fal: FalFake;
let svc: TestService;
let t: Awaited<ReturnType<TestService['team']>>;

beforeAll(async () => {
  fal = await startFalFake({ key: FAL_KEY, video: await testVideo({ width: 160, height: 90, seconds: 1, audio: false }), pollsUntilDone: 1_000, webhookAfterMs: 300 });
  svc = await startTestService(
    { FAL_KEY, FAL_QUEUE_URL: fal.url, FAL_JWKS_URL: `${fal.url}/.well-known/jwks.json`, ENGINE_ROUTES: 'veo-3.1=fal,*=local', UPSTREAM_POLL_MS: '60000' },
    { worker: true },
  );
  t = await svc.team({ credits: 10_000 });
});
afterAll(async () => {
  await svc?.close();
  await fal?.close();
});

const hook = (headers: Record<string, string>, body: string) => svc.api('POST', '/hooks/fal', { rawBody: body, headers });
const attemptOf = (id: string) => svc.app.db.selectFrom('upstream_jobs').selectAll().where('generation_id', '=', id).executeTakeFirstOrThrow();

describe('inbound fal webhooks (a hint to poll now)', () => {
  it('a valid webhook finishes the generation long before the next poll', async () => {
    const started = Date.now();
    const res = await svc.api('POST', '/api/v1/videos/ai-video', { key: t.key, body: { model: 'veo-3.1', prompt: 'hooked', aspect_ratio: '16:9', duration: 4 } });
    const g = await waitForGeneration(svc, t.key, res.body.generation_id, 30_000);
    expect(g.status).toBe('completed');
    expect(Date.now() - started).toBeLessThan(30_000);
    const [sent] = fal.submits.filter((s) => s.input.prompt === 'hooked');
    expect(sent!.query.fal_webhook).toBe(`${svc.baseUrl}/hooks/fal`);
    expect(fal.hooksSent.filter((h) => h.body.includes(sent!.requestId)).map((h) => h.status)).toEqual([200]);
    expect((await svc.fetchUrl(g.result_url)).status).toBe(200);
  });

  it('a forged, stale or mismatched webhook is 401 and changes nothing; a replay of a valid one is ignored', async () => {
    fal.holdCompletion(true);
    const res = await svc.api('POST', '/api/v1/videos/ai-video', { key: t.key, body: { model: 'veo-3.1', prompt: 'not yet', aspect_ratio: '16:9', duration: 4 } });
    const id = res.body.generation_id as string;
    // Held IN_PROGRESS: fal sends no webhook of its own for this job.
    const waitFor = async (cond: () => boolean) => {
      for (let i = 0; i < 100 && !cond(); i++) await new Promise((r) => setTimeout(r, 50));
    };
    await waitFor(() => fal.submits.some((s) => s.input.prompt === 'not yet'));
    const sent = fal.submits.find((s) => s.input.prompt === 'not yet')!;
    await waitFor(() => fal.requests.has(sent.requestId));
    const before = await attemptOf(id);

    const body = JSON.stringify({ request_id: sent.requestId, gateway_request_id: sent.requestId, status: 'OK', payload: {} });
    const forger = generateKeyPairSync('ed25519').privateKey;
    for (const headers of [
      fal.signed(sent.requestId, body, { key: forger }),
      fal.signed(sent.requestId, body, { timestamp: Math.floor(Date.now() / 1000) - 3600 }),
      fal.signed('someone-else', body),
      { ...fal.signed(sent.requestId, body), 'x-fal-webhook-signature': 'zz' },
      { 'content-type': 'application/json' },
    ]) {
      const r = await hook(headers, body);
      expect(r.status).toBe(401);
      expect(r.body).toEqual({ error: { code: 'unauthorized', message: 'The webhook signature is not valid' } });
    }
    const tampered = await hook(fal.signed(sent.requestId, body), body.replace('OK', 'ERROR'));
    expect(tampered.status).toBe(401);
    const after = await attemptOf(id);
    expect(after.state).toBe('submitted');
    expect(after.polls).toBe(before.polls);
    expect((await svc.api('GET', `/api/v1/generations/${id}`, { key: t.key })).body.status).toBe('processing');

    // A valid replay for a job already ended is accepted and ignored.
    fal.holdCompletion(false);
    expect(fal.hooksSent.some((h) => h.body.includes(sent.requestId))).toBe(false);
    const first = fal.hooksSent.find((h) => h.body.includes(fal.submits.find((s) => s.input.prompt === 'hooked')!.requestId))!;
    const replay = await hook(first.headers, first.body);
    expect(replay.status).toBe(200);
    expect(replay.body).toEqual({ received: true, outcome: 'ignored' });
  });

  it('a webhook without signature headers is 401; an unknown provider is 404', async () => {
    const r = await hook({ 'content-type': 'application/json' }, '{}');
    expect(r.status).toBe(401);
    const unknown = await svc.api('POST', '/hooks/nobody', { rawBody: '{}', headers: { 'content-type': 'application/json' } });
    expect(unknown.status).toBe(404);
  });
});

describe("fal's JWKS refresh guard", () => {
  // A JWKS server that counts its fetches: empty (fal published no key) or failing (unreachable in effect).
  async function jwksServer(answer: (res: http.ServerResponse) => void) {
    let fetches = 0;
    const server = http.createServer((_req, res) => {
      fetches++;
      answer(res);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks.json`, fetches: () => fetches, close: () => new Promise<void>((r) => server.close(() => r())) };
  }

  for (const [name, answer] of [
    ['empty', (res: http.ServerResponse) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"keys":[]}')],
    ['failing', (res: http.ServerResponse) => res.writeHead(503).end('down')],
  ] as const) {
    it(`a flood of forged webhooks fetches an ${name} key list at most once a minute`, async () => {
      const jwks = await jwksServer(answer);
      const dispatcher = new Agent();
      let clock = Date.now();
      const verify = createFalHookVerifier({ jwksUrl: jwks.url, dispatcher, now: () => clock });
      const forger = generateKeyPairSync('ed25519').privateKey;
      try {
        const body = JSON.stringify({ request_id: 'forged', status: 'OK', payload: {} });
        const forged = () => fal.signed('forged', body, { key: forger, timestamp: Math.floor(clock / 1000) });
        for (let i = 0; i < 20; i++) {
          await verify(forged(), Buffer.from(body)).then((v) => expect(v).toBeNull(), (e: Error) => expect(e.message).toMatch(/JWKS/));
        }
        expect(jwks.fetches()).toBe(1);
        // A minute later one more fetch is allowed, and again only one.
        clock += 61_000;
        for (let i = 0; i < 20; i++) {
          await verify(forged(), Buffer.from(body)).then((v) => expect(v).toBeNull(), (e: Error) => expect(e.message).toMatch(/JWKS/));
        }
        expect(jwks.fetches()).toBe(2);
      } finally {
        await dispatcher.close();
        await jwks.close();
      }
    });
  }
});
