import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/app.ts';

let svc: TestService;
let key: string;
let ids: string[];

beforeAll(async () => {
  svc = await startTestService();
  const t = await svc.team();
  key = t.key;
  // 25 rows straight into the table: pagination is about the list, not about image downloads.
  const rows = Array.from({ length: 25 }, (_, i) => ({
    team_id: t.teamId,
    name: `p${String(i).padStart(2, '0')}`,
    description: 'd',
    category: 'c',
    image_key: 'products/none.png',
    image_source_url: 'https://example.com/none.png',
    created_at: new Date(Date.UTC(2026, 0, 1, 0, 0, i)),
  }));
  await svc.app.db.insertInto('products').values(rows).execute();
  ids = (await svc.app.db.selectFrom('products').select('id').orderBy('created_at', 'desc').execute()).map((r) => r.id);
});
afterAll(() => svc?.close());

const list = (query: string) => svc.api('GET', `/api/v1/products${query}`, { key });

describe('pagination (limit 1-100, default 20; offset >= 0, default 0)', () => {
  it('defaults to 20 items from offset 0, with the total', async () => {
    const res = await list('');
    expect(res.status).toBe(200);
    expect(res.body.pagination).toEqual({ total: 25, limit: 20, offset: 0 });
    expect(res.body.data.map((p: { id: string }) => p.id)).toEqual(ids.slice(0, 20));
  });

  it('pages through every row exactly once, newest first', async () => {
    const seen: string[] = [];
    for (let offset = 0; offset < 25; offset += 7) {
      const res = await list(`?limit=7&offset=${offset}`);
      expect(res.body.pagination).toEqual({ total: 25, limit: 7, offset });
      seen.push(...res.body.data.map((p: { id: string }) => p.id));
    }
    expect(seen).toEqual(ids);
  });

  it('accepts the bounds limit=1 and limit=100, and an offset past the end', async () => {
    expect((await list('?limit=1')).body.data).toHaveLength(1);
    expect((await list('?limit=100')).body.data).toHaveLength(25);
    const past = await list('?offset=500');
    expect(past.status).toBe(200);
    expect(past.body).toEqual({ data: [], pagination: { total: 25, limit: 20, offset: 500 } });
  });

  for (const q of ['limit=0', 'limit=101', 'limit=-1', 'limit=abc', 'limit=1.5', 'limit=', 'limit=1e2', 'offset=-1', 'offset=x', 'offset=2.5', 'limit=5&limit=6']) {
    it(`refuses ?${q} with 400 validation_error naming the parameter`, async () => {
      const res = await list(`?${q}`);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('validation_error');
      expect(res.body.error.message).toMatch(/^(limit|offset): /);
    });
  }

  it('applies the same rules on brands', async () => {
    expect((await svc.api('GET', '/api/v1/brands?limit=101', { key })).status).toBe(400);
    expect((await svc.api('GET', '/api/v1/brands?limit=100&offset=3', { key })).body.pagination).toEqual({ total: 0, limit: 100, offset: 3 });
  });
});
