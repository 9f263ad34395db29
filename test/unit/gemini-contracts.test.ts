import { describe, expect, it } from 'vitest';
import { checkAnswer, contractsOf, requestProblems, type Contract } from '../support/contract.ts';

/*
 * The Gemini contracts compile (requests, answers and the per-model schemas) and say where each was
 * read: a source URL, the day, the commit for a repository, a refresh recipe, and an x-source on
 * every request field read from a page.
 */
const contracts = Object.entries(contractsOf('gemini'));

/** Every property schema under a request schema, with its path, that names no source of its own or above. */
function unsourced(schema: unknown, path: string, sourced: boolean, out: string[]): string[] {
  if (!schema || typeof schema !== 'object') return out;
  const s = schema as Record<string, unknown>;
  // The body's own x-source names the call's source; each field still names where it was read.
  const here = sourced || (path !== 'body' && typeof s['x-source'] === 'string');
  for (const [name, child] of Object.entries((s.properties as Record<string, unknown>) ?? {})) {
    const c = child as Record<string, unknown>;
    if (c && typeof c === 'object' && !here && typeof c['x-source'] !== 'string' && !('$ref' in c)) out.push(`${path}.${name}`);
    unsourced(child, `${path}.${name}`, here, out);
  }
  for (const key of ['items', 'then', 'if']) unsourced(s[key], `${path}.${key}`, here, out);
  for (const key of ['oneOf', 'anyOf', 'allOf']) for (const [i, b] of ((s[key] as unknown[]) ?? []).entries()) unsourced(b, `${path}.${key}[${i}]`, here, out);
  for (const [name, def] of Object.entries((s.$defs as Record<string, unknown>) ?? {})) unsourced(def, `${path}.$defs.${name}`, here, out);
  return out;
}

const modelSchemas = (c: Contract): object[] => Object.values(((c.request.body as any)?.$defs?.models?.$defs ?? {}) as Record<string, object>);

describe('Gemini contracts', () => {
  it('cover every call the adapter and its check make', () => {
    expect(contracts.map(([, c]) => c.call).sort()).toEqual(
      [
        'GET /v1beta/files/{id}:download?alt=media',
        'GET /v1beta/models',
        'GET /v1beta/{name=models/*/operations/*}',
        'GET /v1beta/{name=models/*}',
        'POST /v1beta/models/{model}:generateContent',
        'POST /v1beta/models/{model}:predictLongRunning',
      ].sort(),
    );
  });

  for (const [name, c] of contracts) {
    it(`${name}: provenance, and every schema compiles`, () => {
      expect(c.provider).toBe('gemini');
      expect(c.source.url).toMatch(/^https:\/\//);
      expect(c.source.retrieved).toMatch(/^20\d\d-\d\d-\d\d$/);
      if (c.source.url.includes('github.com')) expect(c.source.commit).toMatch(/^[0-9a-f]{40}$/);
      expect(c.source.refresh).toBeTruthy();
      for (const a of c.also ?? []) expect(a.url).toMatch(/^https:\/\//);
      expect(() => requestProblems(c, {})).not.toThrow();
      for (const schema of modelSchemas(c)) expect(() => requestProblems({ ...c, request: { method: 'POST', path: '/', body: schema } }, { body: {} })).not.toThrow();
      // Compiling the answers: an error body is checked by the fake on every refusal.
      for (const status of Object.keys(c.responses)) {
        expect(() => {
          try {
            checkAnswer(c, Number(status.replace('xx', '00')), {});
          } catch (e) {
            if (!/outside its contract/.test(String(e))) throw e;
          }
        }).not.toThrow();
      }
      expect(unsourced(c.request.body, 'body', false, []), 'request fields without an x-source').toEqual([]);
    });
  }
});
