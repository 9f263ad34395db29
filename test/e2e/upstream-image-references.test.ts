import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGeminiFake } from '../support/gemini-fake.ts';
import { graphqlClient } from '../support/graphql-client.ts';
import { pngBytes, sendBytes, startImageHost } from '../support/image-host.ts';
import { testVideo } from '../support/media-probe.ts';
import { startOpenAiFake } from '../support/openai-fake.ts';
import { startTestService, waitForGeneration, type TestService } from '../support/app.ts';

/*
 * Image edits, product shots and branded text-to-image on the providers that take images: OpenAI
 * (multipart /images/edits) and Gemini (inline parts of generateContent). The images arrive in the
 * order the woven prompt names them: the request's URLs, the brand's logo and reference, the products.
 */
const OPENAI_KEY = 'sk-test-openai-refs-41d2';
const GEMINI_KEY = 'gem-test-refs-7a9b03';
let openai: Awaited<ReturnType<typeof startOpenAiFake>>;
let gemini: Awaited<ReturnType<typeof startGeminiFake>>;
let host: Awaited<ReturnType<typeof startImageHost>>;
let out: Buffer;
const img: Record<string, Buffer> = {};
let svc: TestService;
let t: Awaited<ReturnType<TestService['team']>>;
let brandId: string;
let productId: string;

beforeAll(async () => {
  out = await pngBytes(24, 24, '#3355aa');
  for (const [name, colour] of [['ref', '#ff0000'], ['logo', '#00ff00'], ['brandref', '#0000ff'], ['product', '#888800']] as const) img[name] = await pngBytes(20, 20, colour);
  host = await startImageHost(Object.fromEntries(Object.entries(img).map(([k, v]) => [`/${k}.png`, sendBytes(v, 'image/png')])));
  openai = await startOpenAiFake({ key: OPENAI_KEY, video: await testVideo({ width: 160, height: 90, seconds: 1 }), png: out });
  gemini = await startGeminiFake({ key: GEMINI_KEY, png: out, video: await testVideo({ width: 160, height: 90, seconds: 1 }) });
  svc = await startTestService(
    { OPENAI_API_KEY: OPENAI_KEY, OPENAI_BASE_URL: openai.url, GEMINI_API_KEY: GEMINI_KEY, GEMINI_API_URL: gemini.url, ENGINE_ROUTES: 'gpt-2=openai,gpt-2.5=openai,fast=gemini,pro=gemini,*=local', UPSTREAM_POLL_MS: '40' },
    { worker: true },
  );
  t = await svc.team({ credits: 100_000 });
  const brand = await svc.app.db
    .insertInto('brands')
    .values({ team_id: t.teamId, name: 'Acme', description: 'Kitchenware', brand_color_primary: '#112233', logo_url: host.url('/logo.png'), reference_image_url: host.url('/brandref.png') })
    .returning('id')
    .executeTakeFirstOrThrow();
  brandId = brand.id;
  const p = await svc.api('POST', '/api/v1/products', { key: t.key, body: { name: 'Vase', description: 'Blue glazed', category: 'home', image_url: host.url('/product.png') } });
  expect(p.status).toBe(201);
  productId = p.body.id;
});
afterAll(async () => {
  await svc?.close();
  await openai?.close();
  await gemini?.close();
  await host?.close();
});

const post = (path: string, body: Record<string, unknown>) => svc.api('POST', `/api/v1${path}`, { key: t.key, body });
const completed = async (path: string, body: Record<string, unknown>) => {
  const res = await post(path, body);
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  const g = await waitForGeneration(svc, t.key, res.body.generation_id);
  expect(g.status, g.error).toBe('completed');
  for (const u of g.result_urls) expect((await svc.fetchUrl(u)).bytes.equals(out)).toBe(true);
  return { created: res.body, g };
};
// A multipart form carries line breaks as CRLF (the HTML form encoding); the prompt is the same text.
const edits = () => openai.imageEdits.map((e) => ({ ...e, fields: { ...e.fields, prompt: e.fields.prompt?.replace(/\r\n/g, '\n') } }));
/** Whether the stored product image (re-encoded by us) is what went upstream: same size as our stored copy. */
const storedProduct = async () => {
  const row = await svc.app.db.selectFrom('products').select('image_key').where('id', '=', productId).executeTakeFirstOrThrow();
  return (await svc.app.storage.get(row.image_key))!.bytes;
};

describe('OpenAI /images/edits', () => {
  it('an edit sends every image as an image[] file in order, with the brand and product woven into the prompt', async () => {
    await completed('/images/edit', { model: 'gpt-2', prompt: 'put it on the shelf', aspect_ratio: '1:1', quantity: 2, effort: 'high', reference_image_urls: [host.url('/ref.png')], brand_id: brandId, product_ids: [productId] });
    const edit = edits().find((e) => e.fields.prompt?.startsWith('put it on the shelf'))!;
    expect(edit.fields).toMatchObject({ model: 'gpt-image-2', n: '2', size: '1024x1024', quality: 'high' });
    expect(edit.fields.prompt).toBe(
      'put it on the shelf\nBrand: Acme (Kitchenware). Brand colours: #112233.\nProduct: Vase (home, Blue glazed).\nAttached images, in order: a reference image; the brand logo; the brand reference image; the product image of Vase.',
    );
    expect(edit.images.map((i) => i.field)).toEqual(['image[]', 'image[]', 'image[]', 'image[]']);
    expect(edit.images.map((i) => i.type)).toEqual(['image/png', 'image/png', 'image/png', expect.stringMatching(/^image\//)]);
    expect(edit.images[0]!.bytes.equals(img.ref!)).toBe(true);
    expect(edit.images[1]!.bytes.equals(img.logo!)).toBe(true);
    expect(edit.images[2]!.bytes.equals(img.brandref!)).toBe(true);
    expect(edit.images[3]!.bytes.equals(await storedProduct())).toBe(true);
  });

  it('text-to-image with a product becomes an image edit (type image-edit) sent to /images/edits', async () => {
    const { created } = await completed('/images/text-to-image', { model: 'gpt-2.5', prompt: 'vase on marble', aspect_ratio: '2:3', product_ids: [productId] });
    expect(created.type).toBe('image-edit');
    const edit = edits().find((e) => e.fields.prompt?.startsWith('vase on marble'))!;
    expect(edit.fields).toMatchObject({ prompt: 'vase on marble\nProduct: Vase (home, Blue glazed).', size: '1024x1536' });
    expect(edit.images).toHaveLength(1);
    expect(openai.imageCreates.some((c) => String(c.prompt).startsWith('vase on marble'))).toBe(false);
  });

  it("product shots: the style's prompt and the extra guidance, on the product's image (through GraphQL)", async () => {
    const style = await svc.app.db.selectFrom('style_templates').select(['id', 'prompt']).where('id', '=', 'studio-white').executeTakeFirstOrThrow();
    const client = await graphqlClient(svc);
    const res = await client.gql(
      `mutation ($p: ID!) { createProductShots(input: { model: "gpt-2", aspect_ratio: "1:1", product_id: $p, style_id: "studio-white", additional_prompt: "soft shadow" }) { ... on MutationCreateProductShotsSuccess { data { generation_id type } } ... on AppError { code message } } }`,
      { p: productId },
      t.key,
    );
    await client.close();
    expect(res.body.errors).toBeUndefined();
    const { generation_id, type } = res.body.data.createProductShots.data;
    expect(type).toBe('product-shots');
    expect((await waitForGeneration(svc, t.key, generation_id)).status).toBe('completed');
    const edit = edits().find((e) => e.fields.prompt?.startsWith(`${style.prompt}. soft shadow`))!;
    expect(edit.fields.prompt).toBe(`${style.prompt}. soft shadow\nProduct: Vase (home, Blue glazed).`);
    expect(edit.images).toHaveLength(1);
    expect(edit.images[0]!.bytes.equals(await storedProduct())).toBe(true);
  });

  it('an edit whose reference cannot be fetched fails with a clear error and is refunded; nothing reaches OpenAI', async () => {
    const before = (await svc.app.db.selectFrom('teams').select('credits_used').where('id', '=', t.teamId).executeTakeFirstOrThrow()).credits_used;
    const res = await post('/images/edit', { model: 'gpt-2', prompt: 'missing reference', aspect_ratio: '1:1', reference_image_urls: [host.url('/nope.png')] });
    const g = await waitForGeneration(svc, t.key, res.body.generation_id);
    expect(g.status).toBe('failed');
    expect(g.error).toMatch(/^an input file could not be fetched: /);
    expect(openai.imageEdits.some((e) => e.fields.prompt?.startsWith('missing reference'))).toBe(false);
    expect((await svc.app.db.selectFrom('teams').select('credits_used').where('id', '=', t.teamId).executeTakeFirstOrThrow()).credits_used).toBe(before);
  });
});

describe('Gemini generateContent with inline images', () => {
  it('an edit sends the woven prompt then each image inline, once per image asked for', async () => {
    await completed('/images/edit', { model: 'pro', prompt: 'gemini edit', aspect_ratio: '4:3', resolution: '2k', quantity: 2, reference_image_urls: [host.url('/ref.png')], brand_id: brandId });
    const calls = gemini.imageCalls.map((c) => c.body).filter((b) => String(b.contents?.[0]?.parts?.[0]?.text ?? '').startsWith('gemini edit'));
    expect(calls).toHaveLength(2);
    const parts = calls[0]!.contents[0].parts;
    expect(parts[0].text).toBe('gemini edit\nBrand: Acme (Kitchenware). Brand colours: #112233.\nAttached images, in order: a reference image; the brand logo; the brand reference image.');
    expect(parts.slice(1).map((p: { inlineData: { mimeType: string } }) => p.inlineData.mimeType)).toEqual(['image/png', 'image/png', 'image/png']);
    expect(Buffer.from(parts[1].inlineData.data, 'base64').equals(img.ref!)).toBe(true);
    expect(Buffer.from(parts[3].inlineData.data, 'base64').equals(img.brandref!)).toBe(true);
    expect(calls[0]!.generationConfig).toEqual({ responseModalities: ['IMAGE'], imageConfig: { aspectRatio: '4:3', imageSize: '2K' } });
  });

  it('an image edit through GraphQL on the pro model', async () => {
    const client = await graphqlClient(svc);
    const res = await client.gql(
      `mutation ($input: ImageEditInput!) { createImageEdit(input: $input) { ... on MutationCreateImageEditSuccess { data { generation_id type } } ... on AppError { code message } } }`,
      { input: { model: 'pro', prompt: 'gemini graphql edit', aspect_ratio: '1:1', reference_image_urls: [host.url('/ref.png')] } },
      t.key,
    );
    await client.close();
    const id = res.body.data?.createImageEdit?.data?.generation_id;
    expect(id, JSON.stringify(res.body)).toBeTruthy();
    const g = await waitForGeneration(svc, t.key, id);
    expect(g.status, g.error).toBe('completed');
    const call = gemini.imageCalls.map((c) => c.body).find((c) => String(c.contents[0].parts[0].text).startsWith('gemini graphql edit'))!;
    expect(Buffer.from(call.contents[0].parts[1].inlineData.data, 'base64').equals(img.ref!)).toBe(true);
  });

  it('product shots and a branded text-to-image on the fast model', async () => {
    await completed('/images/product-shots', { model: 'fast', aspect_ratio: '1:1', product_id: productId, style_id: 'studio-white' });
    const shot = gemini.imageCalls.map((c) => c.body).find((c) => c.contents[0].parts.length === 2 && String(c.contents[0].parts[0].text).endsWith('Product: Vase (home, Blue glazed).'))!;
    expect(Buffer.from(shot.contents[0].parts[1].inlineData.data, 'base64').equals(await storedProduct())).toBe(true);
    const { created } = await completed('/images/text-to-image', { model: 'fast', prompt: 'gemini branded', aspect_ratio: '9:16', brand_id: brandId });
    expect(created.type).toBe('image-edit');
    const call = gemini.imageCalls.map((c) => c.body).find((c) => String(c.contents[0].parts[0].text).startsWith('gemini branded'))!;
    expect(call.contents[0].parts).toHaveLength(3);
  });
});
