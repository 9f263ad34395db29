import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/app.ts';

let svc: TestService;
let a: Awaited<ReturnType<TestService['team']>>;
let b: Awaited<ReturnType<TestService['team']>>;

beforeAll(async () => {
  svc = await startTestService();
  a = await svc.team({ credits: 500 });
  b = await svc.team();
});
afterAll(() => svc?.close());

const BRAND_FIELDS = [
  'brand_color_accent',
  'brand_color_primary',
  'brand_voice',
  'created_at',
  'description',
  'id',
  'industry',
  'logo_url',
  'name',
  'reference_image_url',
  'target_audience',
  'website_url',
];

describe('brands', () => {
  it('lists and gets the team\'s brands with the spec\'s fields', async () => {
    const full = await svc.app.services.brands.create(a.teamId, {
      name: 'Northwind',
      description: 'Outdoor gear',
      industry: 'retail',
      website_url: 'https://northwind.example',
      brand_voice: 'warm, plain-spoken',
      target_audience: 'hikers',
      brand_color_primary: '#1A2B3C',
      brand_color_accent: '#fc0',
      logo_url: 'https://northwind.example/logo.png',
      reference_image_url: 'https://northwind.example/ref.jpg',
    });
    const bare = await svc.app.services.brands.create(a.teamId, { name: 'Bare' });
    const list = await svc.api('GET', '/api/v1/brands', { key: a.key });
    expect(list.status).toBe(200);
    expect(list.body.pagination).toEqual({ total: 2, limit: 20, offset: 0 });
    expect(list.body.data.map((x: { id: string }) => x.id)).toEqual([bare.id, full.id]);
    for (const x of list.body.data) expect(Object.keys(x).sort()).toEqual(BRAND_FIELDS);
    const one = await svc.api('GET', `/api/v1/brands/${full.id}`, { key: a.key });
    expect(one.body).toEqual({ ...full });
    expect(one.body.brand_color_primary).toBe('#1A2B3C');
    const bareOne = await svc.api('GET', `/api/v1/brands/${bare.id}`, { key: a.key });
    expect(bareOne.body).toMatchObject({ description: '', industry: '', website_url: null, logo_url: null });
  });

  it("team B gets 404 on team A's brand and an empty list", async () => {
    const brand = await svc.app.services.brands.create(a.teamId, { name: 'Private' });
    const missing = await svc.api('GET', '/api/v1/brands/00000000-0000-4000-8000-000000000000', { key: b.key });
    const res = await svc.api('GET', `/api/v1/brands/${brand.id}`, { key: b.key });
    expect(res.status).toBe(404);
    expect(res.body).toEqual(missing.body);
    expect(res.body.error.code).toBe('not_found');
    const list = await svc.api('GET', '/api/v1/brands', { key: b.key });
    expect(list.body).toEqual({ data: [], pagination: { total: 0, limit: 20, offset: 0 } });
  });
});

describe('GET /account/credits', () => {
  it('answers used, limit and remaining = limit - used', async () => {
    const res = await svc.api('GET', '/api/v1/account/credits', { key: a.key });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ credits_used: 0, credits_limit: 500, credits_remaining: 500 });
    await svc.app.db.updateTable('teams').set({ credits_used: 120 }).where('id', '=', a.teamId).execute();
    const after = await svc.api('GET', '/api/v1/account/credits', { key: a.key });
    expect(after.body).toEqual({ credits_used: 120, credits_limit: 500, credits_remaining: 380 });
  });

  it('a new billing period and a new limit show at once', async () => {
    await svc.app.services.credits.resetPeriod(a.teamId);
    await svc.app.services.credits.setLimit(a.teamId, 800);
    const res = await svc.api('GET', '/api/v1/account/credits', { key: a.key });
    expect(res.body).toEqual({ credits_used: 0, credits_limit: 800, credits_remaining: 800 });
  });

  it('the database itself refuses credits_used above credits_limit', async () => {
    await expect(
      svc.app.db.updateTable('teams').set({ credits_used: 801 }).where('id', '=', a.teamId).execute(),
    ).rejects.toThrow(/credits_within_limit/);
  });
});
