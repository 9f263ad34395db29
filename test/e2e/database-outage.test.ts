import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/app.ts';
import { graphqlClient } from '../support/graphql-client.ts';
import { startTcpProxy } from '../support/tcp-proxy.ts';

// The service reaches PostgreSQL through a hop the test cuts: the database away, as the API sees it.
let svc: TestService;
let proxy: Awaited<ReturnType<typeof startTcpProxy>>;
let team: Awaited<ReturnType<TestService['team']>>;

beforeAll(async () => {
  svc = await startTestService({}, {
    databaseUrl: async (url) => {
      const u = new URL(url);
      proxy = await startTcpProxy({ host: u.hostname, port: Number(u.port) });
      u.host = `127.0.0.1:${proxy.port}`;
      return u.toString();
    },
  });
  team = await svc.team();
});
afterAll(async () => {
  await proxy?.restore().catch(() => {});
  await svc?.close();
  await proxy?.close();
});

describe('PostgreSQL unreachable', () => {
  it('the API answers 503 service_unavailable with Retry-After in the error shape, within 10 s; /healthz stays 200, /readyz says 503; then it serves again by itself', async () => {
    expect((await svc.api('GET', '/api/v1/products', { key: team.key })).status).toBe(200);
    await proxy.cut();
    try {
      // The key is cached for a second; past it every request needs the database.
      await new Promise((r) => setTimeout(r, 1100));
      for (const [method, path, body] of [
        ['GET', '/api/v1/products', undefined],
        ['POST', '/api/v1/images/text-to-image', { prompt: 'a mug', model: 'fast', aspect_ratio: '1:1' }],
      ] as const) {
        const started = Date.now();
        const res = await svc.api(method, path, { key: team.key, ...(body ? { body } : {}) });
        expect(Date.now() - started).toBeLessThan(10_000);
        expect(res.status, `${method} ${path}`).toBe(503);
        expect(res.headers['retry-after']).toBe('5');
        expect(res.body).toEqual({ error: { code: 'service_unavailable', message: 'The database is unreachable for now: retry in a few seconds' } });
      }
      const g = await graphqlClient(svc);
      try {
        const res = await g.gql('{ credits { credits_remaining } }', {}, team.key);
        expect(res.status).toBe(503);
        expect(res.body.errors[0].extensions.code).toBe('service_unavailable');
      } finally {
        await g.close();
      }
      expect((await svc.api('GET', '/healthz')).status).toBe(200);
      const ready = await svc.api('GET', '/readyz');
      expect(ready.status).toBe(503);
      // Generic words: the driver's own error is for the log, not for whoever asks /readyz.
      expect(ready.body.checks.database).toBe('unreachable');
      expect(ready.body.error.message).toBe('Not ready: database: unreachable; migrations: unknown');
    } finally {
      await proxy.restore();
    }
    // The pool opens new connections by itself: nothing to restart.
    await expect.poll(async () => (await svc.api('GET', '/api/v1/products', { key: team.key })).status, { timeout: 15_000, interval: 250 }).toBe(200);
    expect((await svc.api('GET', '/readyz')).status).toBe(200);
  }, 60_000);
});
