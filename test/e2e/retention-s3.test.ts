import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/app.ts';
import { pngBytes } from '../support/image-host.ts';
import { startS3Server } from '../support/s3-server.ts';

let s3: Awaited<ReturnType<typeof startS3Server>>;
let svc: TestService;
let png: Buffer;

beforeAll(async () => {
  s3 = await startS3Server('adforge-retention');
  png = await pngBytes(32, 32, '#44aa22');
  svc = await startTestService({
    RETENTION_DAYS: '30',
    ...s3.env,
  });
});
afterAll(async () => {
  await svc?.close();
  await s3?.close();
});

type Team = Awaited<ReturnType<TestService['team']>>;

async function completed(t: Team, age: number): Promise<{ id: string; keys: string[]; links: string[] }> {
  const res = await svc.api('POST', '/api/v1/images/text-to-image', { key: t.key, body: { model: 'fast', prompt: 'a shoe', aspect_ratio: '1:1', quantity: 2 } });
  const id: string = res.body.generation_id;
  const keys = [1, 2].map((i) => `generations/${t.teamId}/${id}/${i}.png`);
  for (const k of keys) await svc.app.storage.put(k, png, 'image/png');
  await svc.app.services.lifecycle.complete(id, keys, {});
  await sql`update generations set created_at = now() - make_interval(days => ${age}) where id = ${id}`.execute(svc.app.db);
  const links = (await svc.api('GET', `/api/v1/generations/${id}`, { key: t.key })).body.result_urls;
  return { id, keys, links };
}

describe('retention with STORAGE=s3', () => {
  it('the daily job removes the objects of generations past retention from the bucket (their presigned links then fail) and keeps the others', async () => {
    const t = await svc.team();
    const old = await completed(t, 31);
    const young = await completed(t, 29);
    for (const link of old.links) expect((await svc.fetchUrl(link)).status).toBe(200);

    expect(await svc.app.services.retention.run()).toMatchObject({ generations: 1 });
    for (const k of old.keys) expect(await svc.app.storage.get(k), k).toBeNull();
    for (const k of young.keys) expect(await svc.app.storage.get(k), k).not.toBeNull();
    for (const link of old.links) expect((await svc.fetchUrl(link)).status).toBe(404);
    const after = (await svc.api('GET', `/api/v1/generations/${old.id}`, { key: t.key })).body;
    expect(after).toMatchObject({ status: 'completed', result_url: null, result_urls: [], error: null });
    expect(after.files_expired_at).toEqual(expect.any(String));
    expect((await svc.api('GET', `/api/v1/generations/${young.id}`, { key: t.key })).body.result_urls).toHaveLength(2);
    expect(await svc.app.services.retention.run()).toMatchObject({ generations: 0 });
  });
});
