import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/app.ts';
import { graphqlClient } from '../support/graphql-client.ts';

let svc: TestService;
let g: Awaited<ReturnType<typeof graphqlClient>>;
beforeAll(async () => {
  // No worker: a generation made here stays processing.
  svc = await startTestService();
  g = await graphqlClient(svc);
});
afterAll(async () => {
  await g?.close();
  await svc?.close();
});

const DELETE = 'mutation($id: ID!) { deleteBrand(id: $id) { __typename ... on MutationDeleteBrandSuccess { data { id } } ... on AppError { code message } } }';

describe('deleteBrand', () => {
  it('deletes the team\'s brand; another team\'s is not found; one used by a generation being made is a 409 in words', async () => {
    const t = await svc.team();
    const other = await svc.team();
    const brand = await svc.app.services.brands.create(t.teamId, { name: 'Northwind', brand_color_primary: '#112233' });
    const busy = await svc.app.services.brands.create(t.teamId, { name: 'Busy' });

    expect((await g.gql(DELETE, { id: brand.id }, other.key)).body.data.deleteBrand).toMatchObject({ __typename: 'AppError', code: 'not_found' });
    expect((await g.gql(DELETE, { id: brand.id }, t.key)).body.data.deleteBrand).toEqual({ __typename: 'MutationDeleteBrandSuccess', data: { id: brand.id } });
    expect((await svc.api('GET', `/api/v1/brands/${brand.id}`, { key: t.key })).status).toBe(404);
    expect((await g.gql(DELETE, { id: brand.id }, t.key)).body.data.deleteBrand).toMatchObject({ code: 'not_found' });

    const made = await svc.api('POST', '/api/v1/images/text-to-image', { key: t.key, body: { prompt: 'a mug', model: 'fast', aspect_ratio: '1:1', brand_id: busy.id } });
    expect(made.status).toBe(202);
    expect((await g.gql(DELETE, { id: busy.id }, t.key)).body.data.deleteBrand).toEqual({
      __typename: 'AppError',
      code: 'conflict',
      message: 'Brand is used by a generation still being made; delete it when that one has finished',
    });
    expect((await svc.api('GET', `/api/v1/brands/${busy.id}`, { key: t.key })).status).toBe(200);
  });
});
