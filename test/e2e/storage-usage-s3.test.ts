import fs from 'node:fs/promises';
import path from 'node:path';
import { sql } from 'kysely';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/app.ts';
import { pngBytes } from '../support/image-host.ts';
import { startS3Server } from '../support/s3-server.ts';

// Storage usage with STORAGE=s3 (s3rver): a presigned upload counts once its completion found the
// bytes (not while pending), the quota refuses a presign past it, and the recount reads sizes from
// the bucket.

let s3: Awaited<ReturnType<typeof startS3Server>>;
let svc: TestService;
let agent: Agent;
let png: Buffer;

beforeAll(async () => {
  s3 = await startS3Server('adforge-storage-usage');
  svc = await startTestService({
    ...s3.env,
    STORAGE_QUOTA_TIERS: 'pro=100KB',
  });
  agent = new Agent({ connect: { ca: await fs.readFile(path.join(svc.dataDir, 'tls', 'self-signed-cert.pem'), 'utf8') } });
  png = await pngBytes(80, 80, '#3355ee');
});
afterAll(async () => {
  await agent?.close();
  await svc?.close();
  await s3?.close();
});

type Team = Awaited<ReturnType<TestService['team']>>;
async function presign(t: Team, body: unknown) {
  const res = await request(`${svc.baseUrl}/api/v1/uploads`, { method: 'POST', dispatcher: agent, headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await res.body.text();
  return { status: res.statusCode, body: text ? JSON.parse(text) : undefined };
}
const usage = async (t: Team) => (await svc.api('GET', '/api/v1/account/storage', { key: t.key })).body;

describe('storage usage with S3 storage', () => {
  it('counts a presigned upload once completed, and a product made from it', async () => {
    const t = await svc.team();
    const res = await presign(t, { content_type: 'image/png', size: png.length });
    expect(res.status).toBe(201);
    expect(await usage(t)).toMatchObject({ uploads_bytes: 0, total_bytes: 0 });
    const sent = await fetch(res.body.upload_url, { method: 'PUT', body: new Blob([new Uint8Array(png)]), headers: { 'content-type': 'image/png' } });
    expect(sent.status).toBe(200);
    expect((await svc.api('POST', `/api/v1/uploads/${res.body.id}/complete`, { key: t.key, body: {} })).status).toBe(200);
    expect(await usage(t)).toMatchObject({ uploads_bytes: png.length, total_bytes: png.length, quota_bytes: null });
    const product = await svc.api('POST', '/api/v1/products', { key: t.key, body: { name: 'Cup', description: 'A cup', category: 'kitchen', image_url: res.body.url } });
    expect(product.status).toBe(201);
    expect(await usage(t)).toMatchObject({ inputs_bytes: png.length, total_bytes: 2 * png.length });

    // A row from before the sizes were recorded: the recount reads its size from the bucket.
    await sql`update products set image_bytes = 0 where id = ${product.body.id}`.execute(svc.app.db);
    expect(await usage(t)).toMatchObject({ inputs_bytes: 0 });
    expect(await svc.app.services.storageUsage.recount(t.teamId)).toEqual({ rows_changed: 1 });
    expect(await usage(t)).toMatchObject({ inputs_bytes: png.length });
    expect(await svc.app.services.storageUsage.recount(t.teamId)).toEqual({ rows_changed: 0 });
  });

  it('refuses a presign past the quota with 403, before any row or link', async () => {
    const t = await svc.team({ tier: 'pro' });
    const before = (await sql<{ n: number }>`select count(*)::int as n from uploads where team_id = ${t.teamId}`.execute(svc.app.db)).rows[0]!.n;
    const res = await presign(t, { content_type: 'image/png', size: 100 * 1024 + 1 });
    expect(res.status).toBe(403);
    expect(res.body.error).toMatchObject({ code: 'forbidden' });
    expect(res.body.error.message).toMatch(/storage quota of its pro tier/);
    expect((await sql<{ n: number }>`select count(*)::int as n from uploads where team_id = ${t.teamId}`.execute(svc.app.db)).rows[0]!.n).toBe(before);
    expect((await presign(t, { content_type: 'image/png', size: 100 * 1024 })).status).toBe(201);
  });
});
