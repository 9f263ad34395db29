import { describe, expect, it } from 'vitest';
import { checkAnswer, contractsOf, requestProblems } from '../support/contract.ts';

/** Every x-source in a schema, at any depth. */
function sources(node: unknown, into: string[] = []): string[] {
  if (Array.isArray(node)) node.forEach((n) => sources(n, into));
  else if (node && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) {
      if (k === 'x-source' && typeof v === 'string') into.push(v);
      else sources(v, into);
    }
  }
  return into;
}

describe('HeyGen contracts (test/contracts/heygen)', () => {
  const contracts = Object.entries(contractsOf('heygen'));

  it('cover every call the adapter and its check make', () => {
    expect(contracts.map(([, c]) => c.call).sort()).toEqual(
      [
        'GET /v1/workflows/executions/{execution_id}',
        'GET /v3/users/me',
        'GET /v3/video-translations/languages',
        'GET /v3/video-translations/{video_translation_id}',
        'GET /v3/videos/{video_id}',
        'GET /v3/videos/statuses',
        'POST /v1/workflows/executions',
        'POST /v3/assets',
        'POST /v3/video-translations',
        'POST /v3/videos',
      ].sort(),
    );
  });

  for (const [name, c] of contracts) {
    it(`${name}: compiles, and says where, when and at which commit it was read`, () => {
      expect(() => requestProblems(c, {})).not.toThrow();
      for (const status of Object.keys(c.responses)) expect(() => checkAnswer(c, Number(status.replace('xx', '00')), {})).not.toThrow(/compile|schema is invalid/);
      expect(c.source.url).toMatch(/^https:\/\/github\.com\/heygen-com\/(heygen-cli|skills-legacy)\/blob\/[0-9a-f]{40}\//);
      expect(c.source.url).toContain(c.source.commit!);
      expect(c.source.retrieved).toMatch(/^20\d\d-\d\d-\d\d$/);
      expect(c.source.refresh).toMatchObject({ github: expect.stringMatching(/^heygen-com\//), path: expect.any(String) });
      for (const a of c.also ?? []) expect(a).toEqual({ url: expect.stringMatching(/^https:\/\//), retrieved: expect.stringMatching(/^20\d\d-/), gave: expect.any(String) });
    });
  }

  it('the statuses read takes up to 100 video ids as one comma-separated query text, and nothing else', () => {
    const statuses = contractsOf('heygen')['get-video-statuses']!;
    const headers = { 'x-api-key': 'k' };
    expect(requestProblems(statuses, { headers, query: { video_ids: Array.from({ length: 100 }, (_, i) => `v${i}`).join(',') } })).toEqual([]);
    for (const video_ids of ['', 'a,,b', Array.from({ length: 101 }, (_, i) => `v${i}`).join(',')]) expect(requestProblems(statuses, { headers, query: { video_ids } }).map((p) => p.path)).toEqual([['video_ids']]);
    expect(requestProblems(statuses, { headers, query: { video_ids: 'a', limit: '100' } }).map((p) => p.kind)).toEqual(['unknown']);
  });

  it('a contract written from a page (the face swap skill) cites it beside each field', () => {
    const create = contractsOf('heygen')['create-workflow-execution']!;
    const cited = sources(create.request.body);
    expect(cited.length).toBeGreaterThanOrEqual(4);
    for (const s of cited) expect(s).toMatch(/skills\/faceswap\/SKILL\.md/);
  });
});
