import { describe, expect, it } from 'vitest';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { contractsOf } from '../support/contract.ts';

const contracts = contractsOf('elevenlabs');

describe('ElevenLabs contracts', () => {
  it('has the two speech calls and the three free reads adforge makes', () => {
    expect(Object.keys(contracts).sort()).toEqual(['models', 'speech-to-speech', 'text-to-speech', 'user-subscription', 'voice']);
  });

  // test/unit/contracts.test.ts checks every provider's provenance and request schemas; here the answers' schemas compile too.
  const ajv = new Ajv2020({ strict: true, strictRequired: false, allowUnionTypes: true });
  ajv.addVocabulary(['x-source', 'x-note']);
  for (const [name, c] of Object.entries(contracts)) {
    it(`${name}: cut from ElevenLabs' OpenAPI at a commit, every answer schema compiles`, () => {
      expect(c.source.url).toMatch(/^https:\/\/github\.com\/elevenlabs\/elevenlabs-docs\/blob\/[0-9a-f]{40}\/fern\/apis\/api\/openapi\.json#\//);
      expect(c.source.commit).toMatch(/^[0-9a-f]{40}$/);
      expect(c.source.refresh).toBeTruthy();
      for (const schema of Object.values(c.responses)) expect(() => ajv.compile(schema)).not.toThrow();
    });
  }
});
