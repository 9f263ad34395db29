import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/app.ts';
import { graphqlClient } from '../support/graphql-client.ts';
import { pngBytes } from '../support/image-host.ts';
import { startS3Server } from '../support/s3-server.ts';

let s3: Awaited<ReturnType<typeof startS3Server>>;
let svc: TestService;
let gql: Awaited<ReturnType<typeof graphqlClient>>;
let png: Buffer;

beforeAll(async () => {
  s3 = await startS3Server('adforge-media');
  png = await pngBytes(32, 32, '#aa2244');
  svc = await startTestService({
    ...s3.env,
  });
  gql = await graphqlClient(svc);
});
afterAll(async () => {
  await gql?.close();
  await svc?.close();
  await s3?.close();
});

type Team = Awaited<ReturnType<TestService['team']>>;

/** A text-to-image generation completed with files in the bucket, and the spoken-script copy an upstream talking avatar keeps. */
async function finished(t: Team): Promise<{ id: string; keys: string[]; links: string[] }> {
  const res = await svc.api('POST', '/api/v1/images/text-to-image', { key: t.key, body: { model: 'fast', prompt: 'a shoe', aspect_ratio: '1:1', quantity: 2 } });
  const id = res.body.generation_id;
  const results = [1, 2].map((i) => `generations/${t.teamId}/${id}/${i}.png`);
  for (const k of results) await svc.app.storage.put(k, png, 'image/png');
  await svc.app.storage.put(`upstream-inputs/${id}/speech.mp3`, Buffer.from('ID3 speech'), 'audio/mpeg');
  await svc.app.services.lifecycle.complete(id, results, {});
  const links = (await svc.api('GET', `/api/v1/generations/${id}`, { key: t.key })).body.result_urls;
  return { id, keys: [...results, `upstream-inputs/${id}/speech.mp3`], links };
}

describe('deleting generations with STORAGE=s3', () => {
  it('DELETE /generations/{id} removes its objects from the bucket: its presigned links then fail', async () => {
    const t = await svc.team({ credits: 100 });
    const g = await finished(t);
    for (const link of g.links) expect(new URL(link).origin).toBe(s3.endpoint);
    for (const link of g.links) expect((await svc.fetchUrl(link)).status).toBe(200);
    for (const k of g.keys) expect(await svc.app.storage.get(k), k).not.toBeNull();

    expect((await svc.api('DELETE', `/api/v1/generations/${g.id}`, { key: t.key })).status).toBe(204);
    for (const k of g.keys) expect(await svc.app.storage.get(k), k).toBeNull();
    for (const link of g.links) expect((await svc.fetchUrl(link)).status).toBe(404);
  });

  it('deleteGenerations removes the objects of every generation it deletes, and only those', async () => {
    const t = await svc.team({ credits: 100 });
    const other = await svc.team({ credits: 100 });
    const [a, b] = [await finished(t), await finished(t)];
    const theirs = await finished(other);
    const res = await gql.gql(
      `mutation ($ids: [ID!]) { deleteGenerations(ids: $ids) { ... on MutationDeleteGenerationsSuccess { data { deleted skipped not_found } } } }`,
      { ids: [a.id, b.id, theirs.id] },
      t.key,
    );
    expect(res.body.data.deleteGenerations.data).toEqual({ deleted: 2, skipped: 0, not_found: 1 });
    for (const k of [...a.keys, ...b.keys]) expect(await svc.app.storage.get(k), k).toBeNull();
    for (const k of theirs.keys) expect(await svc.app.storage.get(k), k).not.toBeNull();
  });
});
