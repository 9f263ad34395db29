import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VOICES } from '../../src/domain/catalogue/voices.ts';
import { graphqlClient } from '../support/graphql-client.ts';
import { startTestService, type TestService } from '../support/app.ts';

// Text PostgreSQL cannot store (NUL, a lone UTF-16 surrogate) used to reach an insert and answer 500.
let svc: TestService;
let gql: Awaited<ReturnType<typeof graphqlClient>>;
let t: Awaited<ReturnType<TestService['team']>>;

beforeAll(async () => {
  svc = await startTestService();
  gql = await graphqlClient(svc);
  t = await svc.team({ credits: 5000 });
});
afterAll(async () => {
  await gql?.close();
  await svc?.close();
});

const rows = async () => {
  const count = async (table: 'generations' | 'voiceovers' | 'products' | 'brands' | 'idempotency_keys' | 'credit_ledger') =>
    Number((await svc.app.db.selectFrom(table).select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow()).n);
  const used = (await svc.app.db.selectFrom('teams').select('credits_used').where('id', '=', t.teamId).executeTakeFirstOrThrow()).credits_used;
  return { used, generations: await count('generations'), voiceovers: await count('voiceovers'), products: await count('products'), brands: await count('brands'), keys: await count('idempotency_keys'), ledger: await count('credit_ledger') };
};

const BAD = { nul: 'a\u0000b', 'lone low surrogate': '\udfff\ud800x', 'lone high surrogate': 'ok \ud83d' };

describe('strings PostgreSQL cannot store', () => {
  for (const [what, text] of Object.entries(BAD)) {
    it(`REST: a ${what} is 400 validation_error naming the field, with nothing stored or charged`, async () => {
      const before = await rows();
      const cases: Array<[string, Record<string, unknown>, string]> = [
        ['/images/text-to-image', { model: 'fast', prompt: text, aspect_ratio: '1:1' }, 'prompt'],
        ['/videos/ai-video', { model: 'sora-2', prompt: 'x', aspect_ratio: '16:9', duration: 4, resolution: text }, 'resolution'],
        ['/voiceovers/text-to-speech', { text, voice_id: VOICES[0]!.id }, 'text'],
        ['/products', { name: text, description: 'd', category: 'c', image_url: 'https://example.com/p.png' }, 'name'],
        ['/images/edit', { model: 'fast', prompt: 'x', aspect_ratio: '1:1', reference_image_urls: ['https://example.com/a.png', text] }, 'reference_image_urls.1'],
      ];
      for (const [path, body, field] of cases) {
        const res = await svc.api('POST', `/api/v1${path}`, { key: t.key, body, headers: { 'idempotency-key': `bad-${what}-${path}` } });
        expect(res.status, `${path}: ${res.text}`).toBe(400);
        expect(res.body).toEqual({ error: { code: 'validation_error', message: `${field}: must not contain NUL characters or unpaired UTF-16 surrogates` } });
      }
      expect(await rows()).toEqual(before);
    });

    it(`GraphQL: a ${what} is a validation_error naming the field, with nothing stored or charged`, async () => {
      const before = await rows();
      const res = await gql.gql(
        `mutation ($input: TextToImageInput!) { createTextToImage(input: $input) { __typename ... on AppError { code message } } }`,
        { input: { model: 'fast', prompt: text, aspect_ratio: '1:1' } },
        t.key,
      );
      expect(res.body.data.createTextToImage).toEqual({ __typename: 'AppError', code: 'validation_error', message: 'prompt: must not contain NUL characters or unpaired UTF-16 surrogates' });
      const brand = await gql.gql(
        `mutation ($input: BrandInput!) { createBrand(input: $input) { __typename ... on AppError { code message } } }`,
        { input: { name: 'B', description: text, industry: 'i' } },
        t.key,
      );
      expect(brand.body.data.createBrand).toEqual({ __typename: 'AppError', code: 'validation_error', message: 'description: must not contain NUL characters or unpaired UTF-16 surrogates' });
      expect(await rows()).toEqual(before);
    });
  }

  it('a campaign row with such a cell is refused by the check, naming its column', async () => {
    const res = await gql.gql(
      `query ($rows: [CampaignRowInput!]!) { checkCampaignRows(rows: $rows) { row_number ok problems { field message } } }`,
      { rows: [{ row_number: 2, cells: { type: 'text-to-image', model: 'fast', prompt: 'a\u0000b', aspect_ratio: '1:1' } }] },
      t.key,
    );
    expect(JSON.stringify(res.body)).toContain('must not contain NUL characters or unpaired UTF-16 surrogates');
    expect(JSON.stringify(res.body)).toContain('"field":"prompt"');
  });
});

describe('POST /images/edit: the reference-image cap names every source', () => {
  it('six reference_image_urls and no brand or products: 400 naming 6, 0 and 0, nothing charged', async () => {
    const before = await rows();
    const urls = Array.from({ length: 6 }, (_, i) => `https://example.com/${i}.png`);
    const res = await svc.api('POST', '/api/v1/images/edit', { key: t.key, body: { model: 'fast', prompt: 'x', aspect_ratio: '1:1', reference_image_urls: urls } });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: {
        code: 'validation_error',
        message: 'reference images: 6 in total (6 from reference_image_urls, 0 from brand_id, 0 from product_ids); at most 5 are allowed',
      },
    });
    expect(await rows()).toEqual(before);
  });
});
