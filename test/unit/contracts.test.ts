import { describe, expect, it } from 'vitest';
import { PROVIDER_MODULES } from '../../src/adapters/engines/providers.ts';
import { contractProviders, contractsOf, requestProblems } from '../support/contract.ts';

// Every provider adforge calls (each module of src/adapters/engines/providers.ts, the speech API), and the ad library source: each must have its published contract stored.
const PROVIDERS = [...PROVIDER_MODULES.map((p) => p.name), 'elevenlabs', 'scrapecreators'].sort();

describe('stored provider contracts', () => {
  it('every provider adforge calls has a folder of contracts', () => {
    expect(contractProviders().sort()).toEqual(expect.arrayContaining(PROVIDERS));
  });

  for (const provider of PROVIDERS) {
    it(`${provider}: each contract says where and when it was read, what it covers, and compiles`, () => {
      const contracts = Object.entries(contractsOf(provider));
      expect(contracts.length).toBeGreaterThan(0);
      for (const [name, c] of contracts) {
        expect(c.provider, name).toBe(provider);
        expect(c.call, name).toMatch(/^(GET|POST|PUT|DELETE|PATCH) \S+/);
        expect(c.covers.length, name).toBeGreaterThan(10);
        expect(c.source.url, name).toMatch(/^https:\/\//);
        expect(c.source.retrieved, name).toMatch(/^20\d\d-\d\d-\d\d$/);
        if (/github\.com/.test(c.source.url)) expect(c.source.commit, `${name}: a repository source names its commit`).toMatch(/^[0-9a-f]{7,40}$/);
        expect(c.source.refresh, `${name}: a refresh recipe`).toBeTruthy();
        expect(c.request.method, name).toBe(c.call.split(' ')[0]);
        expect(Object.keys(c.responses).length, name).toBeGreaterThan(0);
        // Compiling every schema: a broken schema would let every request through.
        expect(() => requestProblems(c, {}), name).not.toThrow();
      }
    });
  }
});
