import { describe, expect, it } from 'vitest';
import { ADS_PATH, MAX_GET_TARGET, adsRequest } from '../../src/adapters/ad-library-source/meta-fields.ts';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { contractsOf, requestProblems } from '../support/contract.ts';

const contracts = contractsOf('scrapecreators');

describe('ScrapeCreators contracts', () => {
  it('has the three calls adforge makes', () => {
    expect(Object.keys(contracts).sort()).toEqual(['company-ads', 'company-ads-post', 'credit-balance']);
  });

  // test/unit/contracts.test.ts checks every provider's provenance and request schemas; here the answers' schemas compile too.
  const ajv = new Ajv2020({ strict: true, strictRequired: false, allowUnionTypes: true });
  ajv.addVocabulary(['x-source', 'x-note']);
  for (const [name, c] of Object.entries(contracts)) {
    it(`${name}: read from ScrapeCreators' CLI at a commit, every answer schema compiles`, () => {
      expect(c.source.commit).toMatch(/^[0-9a-f]{40}$/);
      expect(c.source.refresh).toEqual({ github: 'ScrapeCreators/scrapecreators-cli', path: 'api-config/apis.js' });
      for (const schema of Object.values(c.responses)) expect(() => ajv.compile(schema)).not.toThrow();
    });
  }
});

describe('what the adapter sends agrees with the contract', () => {
  const base = new URL('https://api.scrapecreators.com/');
  const headers = { 'x-api-key': 'k' };

  it('a first page and a short cursor go by GET, with a query the contract takes', () => {
    for (const cursor of [null, 'AQHRBUAxNmFlxBVMFL6uTb1ICFsV65O4SqmPbcVZJhiveBpPS1hFHAmL6yCJcF760cXP']) {
      const req = adsRequest(base, '367152833370567', cursor);
      expect(req.method).toBe('GET');
      expect(req.url.pathname).toBe(`/${ADS_PATH}`);
      expect(requestProblems(contracts['company-ads']!, { headers, query: Object.fromEntries(req.url.searchParams) })).toEqual([]);
    }
  });

  it(`a request line over ${MAX_GET_TARGET} characters goes by POST, with a body the contract takes`, () => {
    const long = 'A'.repeat(MAX_GET_TARGET);
    const req = adsRequest(base, '367152833370567', long);
    expect(req.method).toBe('POST');
    if (req.method !== 'POST') return;
    expect(req.url.search).toBe('');
    const body: unknown = JSON.parse(req.body);
    expect(body).toEqual({ pageId: '367152833370567', status: 'ALL', country: 'ALL', cursor: long });
    expect(requestProblems(contracts['company-ads-post']!, { headers: { ...headers, 'content-type': 'application/json' }, body })).toEqual([]);
  });

  it('the GET limit is a line just at the threshold: one character more goes by POST', () => {
    const probe = adsRequest(base, '1', 'x');
    const room = MAX_GET_TARGET - probe.target;
    expect(adsRequest(base, '1', 'x'.repeat(1 + room)).method).toBe('GET');
    expect(adsRequest(base, '1', 'x'.repeat(2 + room)).method).toBe('POST');
  });
});
