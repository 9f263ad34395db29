import fs from 'node:fs/promises';
import { Document, Spectral } from '@stoplight/spectral-core';
import * as Parsers from '@stoplight/spectral-parsers';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain JavaScript module without types
import ruleset from '../../schema/spectral-ruleset.mjs';

// schema/openapi.json linted by Spectral with spectral:oas and the OWASP API Security rules
// (schema/spectral-ruleset.mjs says which rules are off and why): no error.

async function lint() {
  const spectral = new Spectral();
  spectral.setRuleset(ruleset);
  const text = await fs.readFile(new URL('../../schema/openapi.json', import.meta.url), 'utf8');
  const results = await spectral.run(new Document(text, Parsers.Json, 'schema/openapi.json'));
  return results.filter((r) => r.severity === 0).map((r) => `${r.code} at ${r.path.join('.')}: ${r.message}`);
}

describe('schema/openapi.json under Spectral (spectral:oas, OWASP API Security)', () => {
  it('has no error', async () => {
    expect(await lint()).toEqual([]);
  });
});
