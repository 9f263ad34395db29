import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CONFIG_VARIABLES } from '../../src/config.ts';
import { PROVIDERS } from '../../src/adapters/engines/providers.ts';

// The README and docs/*.md: every relative link reaches a file of the repository (and a heading,
// when it names an anchor), and docs/configuration.md documents every variable the configuration reads.

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PAGES = ['README.md', ...fs.readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
const read = (rel: string) => fs.readFileSync(path.join(ROOT, rel), 'utf8');

/** The page's lines, those of fenced code blocks (and their fences) blanked: indexes stay line numbers. */
function prose(text: string): string[] {
  let fenced = false;
  return text.split('\n').map((line) => {
    if (/^\s*```/.test(line)) { fenced = !fenced; return ''; }
    return fenced ? '' : line;
  });
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens; repeats get -1, -2, ... */
function headingAnchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const line of prose(text)) {
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = (m[1] ?? '').toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').trim().replace(/\s/g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

/** Inline links `[text](target)` outside code (fences and code spans), with their line numbers. */
function links(text: string): { target: string; line: number }[] {
  const out: { target: string; line: number }[] = [];
  prose(text).forEach((raw, i) => {
    const line = raw.replace(/`[^`]*`/g, 'code');
    for (const m of line.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) out.push({ target: m[1]!, line: i + 1 });
  });
  return out;
}

describe('links in README.md and docs/', () => {
  it('reads the pages it checks', () => {
    expect(PAGES).toContain('docs/README.md');
    expect(PAGES).toContain('docs/configuration.md');
    expect(PAGES.length).toBeGreaterThan(10);
  });

  it('finds links and anchors the way GitHub renders them', () => {
    expect(links('see [a](b.md#c) and `[x](not-a-link.md)`\n```\n[y](fenced.md)\n```\n[z](https://e.org)')).toEqual([
      { target: 'b.md#c', line: 1 },
      { target: 'https://e.org', line: 5 },
    ]);
    expect([...headingAnchors('# The `adforge` command\n## Storage usage\n## Storage usage\n```\n# not a heading\n```')]).toEqual([
      'the-adforge-command', 'storage-usage', 'storage-usage-1',
    ]);
  });

  it('every relative link resolves to a file of the repository, and every anchor to a heading', () => {
    const broken: string[] = [];
    let relative = 0;
    for (const page of PAGES) {
      for (const { target, line } of links(read(page))) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
        relative++;
        const [file, anchor] = target.split('#', 2) as [string, string | undefined];
        const resolved = file === '' ? path.join(ROOT, page) : path.resolve(path.dirname(path.join(ROOT, page)), decodeURIComponent(file));
        const where = `${page}:${line} -> ${target}`;
        if (!resolved.startsWith(ROOT)) { broken.push(`${where} (outside the repository)`); continue; }
        if (!fs.existsSync(resolved)) { broken.push(`${where} (no such file)`); continue; }
        if (anchor !== undefined) {
          if (!resolved.endsWith('.md')) broken.push(`${where} (an anchor into a file that is not Markdown)`);
          else if (!headingAnchors(fs.readFileSync(resolved, 'utf8')).has(anchor)) broken.push(`${where} (no such heading)`);
        }
      }
    }
    expect(relative, 'relative links found').toBeGreaterThan(30);
    expect(broken).toEqual([]);
  });

  it('no page points outside the repository', () => {
    for (const page of PAGES) {
      const text = read(page);
      expect(text, page).not.toMatch(/\.\.\/shared|spec\/generation-service-api|DESIGN\.md/);
    }
  });
});

describe('docs/configuration.md', () => {
  const rows = prose(read('docs/configuration.md')).filter((l) => l.startsWith('|'));
  const documented = new Set(rows.flatMap((r) => [...r.matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((m) => m[1]!)));

  // Each provider module (src/adapters/engines/<name>/provider.ts) declares its own variables.
  const providerVariables = PROVIDERS.flatMap((p) => Object.keys(p.env));
  const providerSources = PROVIDERS.map((p) => `src/adapters/engines/${p.name}/provider.ts`);

  it('documents, in a row of its table, every environment variable src/config.ts and the provider modules read', () => {
    // The schema's keys are what loadConfig reads; a read outside it (env.X, env['X']) counts too.
    const direct = ['src/config.ts', ...providerSources].flatMap((f) => [...read(f).matchAll(/\benv(?:\.|\[['"])([A-Z][A-Z0-9_]+)/g)].map((m) => m[1]!));
    const variables = [...new Set([...CONFIG_VARIABLES, ...providerVariables, ...direct])];
    expect(variables.length).toBeGreaterThan(50);
    expect(providerVariables).toContain('SUBMAGIC_POLL_BUDGET');
    expect(providerVariables.filter((v) => !CONFIG_VARIABLES.includes(v))).toEqual([]);
    expect(variables.filter((v) => !documented.has(v))).toEqual([]);
  });

  it('has no row for a variable the configuration does not read', () => {
    const named = rows.slice(2).flatMap((r) => [...(r.split('|')[1] ?? '').matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((m) => m[1]!));
    expect(named.length).toBeGreaterThan(40);
    expect(named.filter((v) => !CONFIG_VARIABLES.includes(v))).toEqual([]);
  });
});
