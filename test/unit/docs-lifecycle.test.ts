import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { LIFECYCLE_BEGIN, LIFECYCLE_END, renderLifecycleTables } from '../support/lifecycle-docs.ts';

const PATH = new URL('../../docs/providers.md', import.meta.url);

describe("docs/providers.md's model lifecycle tables", () => {
  it('are the tables the code decides with, every provider shown (UPDATE_DOCS=1 writes them)', () => {
    const docs = fs.readFileSync(PATH, 'utf8');
    const begin = docs.indexOf(LIFECYCLE_BEGIN);
    const end = docs.indexOf(LIFECYCLE_END);
    expect(begin, 'docs/providers.md carries the lifecycle markers').toBeGreaterThan(-1);
    expect(end).toBeGreaterThan(begin);
    const shown = docs.slice(begin, end + LIFECYCLE_END.length);
    const made = renderLifecycleTables();
    if (shown !== made && process.env.UPDATE_DOCS === '1') fs.writeFileSync(PATH, docs.replace(shown, made));
    else expect(shown).toBe(made);
  });
});
