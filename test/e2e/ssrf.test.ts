import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/app.ts';
import { pngBytes, sendBytes, startImageHost } from '../support/image-host.ts';

// The service as deployed: ALLOW_PRIVATE_NETWORK_URLS off. Redirect hops are re-checked too:
// test/integration/download.test.ts proves it with an address policy that lets the first hop through.
let svc: TestService;
let host: Awaited<ReturnType<typeof startImageHost>>;
let key: string;

beforeAll(async () => {
  svc = await startTestService({ ALLOW_PRIVATE_NETWORK_URLS: 'false' });
  host = await startImageHost({ '/p.png': sendBytes(await pngBytes(), 'image/png') });
  ({ key } = await svc.team());
});
afterAll(async () => {
  await host?.close();
  await svc?.close();
});

const create = (image_url: string) =>
  svc.api('POST', '/api/v1/products', { key, body: { name: 'n', description: 'd', category: 'c', image_url } });

describe('user URLs are fetched only from public addresses', () => {
  for (const [name, url] of [
    ['127.0.0.1', () => host.url('/p.png')],
    ['localhost (DNS to loopback)', () => `http://localhost:${host.port}/p.png`],
    ['the cloud metadata address 169.254.169.254', () => 'http://169.254.169.254/latest/meta-data/'],
    ['[::1]', () => `http://[::1]:${host.port}/p.png`],
    ['a private 10.x address', () => 'http://10.0.0.1/p.png'],
  ] as const) {
    it(`refuses ${name} with 400 and no request reaching it`, async () => {
      const before = host.hits.length;
      const res = await create(url());
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('validation_error');
      expect(res.body.error.message).toMatch(/^image_url: .*(private|reserved)/);
      expect(host.hits.length).toBe(before);
    });
  }

  it('stores nothing for a refused URL', async () => {
    const rows = await svc.app.db.selectFrom('products').select('id').execute();
    expect(rows).toEqual([]);
  });
});
