import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURE_PAGE_ID, startMetaAdLibraryFake, type MetaAdLibraryFake } from '../support/meta-ad-library-fake.ts';

/*
 * The ScrapeCreators fake holds requests to test/contracts/scrapecreators/: a request as the
 * contract has it is answered; the same request with one field misnamed is refused the way
 * ScrapeCreators refuses a bad parameter (400, {success: false, error, errorStatus, message}),
 * naming the field.
 */

const KEY = 'contract-key';
let fake: MetaAdLibraryFake;

beforeAll(async () => {
  fake = await startMetaAdLibraryFake({ token: KEY });
});
afterAll(() => fake.close());

const get = (path: string, query: Record<string, string>) => fetch(`${fake.baseUrl}${path}?${new URLSearchParams(query)}`, { headers: { 'x-api-key': KEY } });
const post = (path: string, body: unknown) => fetch(`${fake.baseUrl}${path}`, { method: 'POST', headers: { 'x-api-key': KEY, 'content-type': 'application/json' }, body: JSON.stringify(body) });

async function refusedNaming(res: Response, field: string) {
  expect(res.status).toBe(400);
  const body = (await res.json()) as Record<string, unknown>;
  expect(body).toMatchObject({ success: false, error: 'bad_request', errorStatus: 400 });
  expect(body.message).toContain(field);
}

const ADS = '/v1/facebook/adLibrary/company/ads';
const valid = { pageId: FIXTURE_PAGE_ID, status: 'ALL', country: 'ALL' };

describe('ScrapeCreators fake holds requests to the contract', () => {
  it('GET company ads: the documented query is answered', async () => {
    const res = await get(ADS, valid);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { results: unknown[] }).results.length).toBeGreaterThan(0);
  });

  it('GET company ads: one misnamed parameter (statuss) is refused, naming it', async () => {
    await refusedNaming(await get(ADS, { pageId: FIXTURE_PAGE_ID, statuss: 'ALL', country: 'ALL' }), 'statuss');
  });

  it('GET company ads: a value outside the documented options is refused, naming the field', async () => {
    await refusedNaming(await get(ADS, { ...valid, status: 'EVERY' }), 'status');
  });

  it('POST company ads: the same parameters as a JSON body are answered', async () => {
    const res = await post(ADS, valid);
    expect(res.status).toBe(200);
  });

  it('POST company ads: one misnamed field (page_id) is refused, naming it', async () => {
    await refusedNaming(await post(ADS, { page_id: FIXTURE_PAGE_ID, status: 'ALL', country: 'ALL' }), 'page_id');
  });

  it('GET credit balance: answered; a query parameter it does not take is refused', async () => {
    const ok = await get('/v1/account/credit-balance', {});
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ creditCount: fake.control.credits });
    await refusedNaming(await get('/v1/account/credit-balance', { verbose: 'true' }), 'verbose');
  });
});
