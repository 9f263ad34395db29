/*
 * `npm run contracts:refresh [-- --provider <name>]`: reads every stored contract's source again
 * and prints what changed since it was read (test/contracts/README.md, "refresh"). A maintainer's
 * command: it needs the network. Exit status: 0 nothing changed, 1 something changed, 2 a source
 * could not be read.
 */
import fs from 'node:fs';
import path from 'node:path';
import { createTwoFilesPatch } from 'diff';
import { parse as parseYaml } from 'yaml';

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

interface Refresh {
  github?: string;
  path?: string;
  pointer?: string;
  url?: string;
  compare?: 'body' | 'response';
  /** With compare 'response': the documented answer to compare (default 200). */
  status?: string;
  page?: boolean;
}

interface StoredContract {
  provider: string;
  call: string;
  source: { url: string; retrieved: string; commit?: string; refresh?: Refresh };
  request: { body?: Json; query?: Json };
  responses?: Record<string, Json>;
}

export interface Finding {
  contract: string;
  state: 'unchanged' | 'changed' | 'unreadable' | 'no-recipe';
  /** A unified diff, the field names a page no longer shows, or why the source could not be read. */
  text: string;
}

const RAW_BASE = process.env.CONTRACTS_RAW_BASE ?? 'https://raw.githubusercontent.com';

async function get(url: string): Promise<string> {
  const res = await fetch(url, { headers: { 'user-agent': 'adforge contracts:refresh' }, signal: AbortSignal.timeout(60_000) }).catch((e: unknown) => {
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    throw new Error(`${url} could not be read (${cause?.code ?? cause?.message ?? (e as Error).message})`);
  });
  if (!res.ok) throw new Error(`${url} answered ${res.status}`);
  return res.text();
}

function parseDocument(text: string, name: string): Json {
  return (/\.ya?ml$/i.test(name) ? parseYaml(text) : JSON.parse(text)) as Json;
}

/** RFC 6901. */
function at(doc: Json, pointer: string): Json {
  let node: Json = doc;
  for (const raw of pointer.split('/').slice(1)) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (node === null || typeof node !== 'object' || !(key in node)) throw new Error(`${pointer} is not in the document`);
    node = (node as Record<string, Json>)[key]!;
  }
  return node;
}

/** Local $refs replaced by what they name, so a schema reads whole; a cycle is left as its $ref. */
function inline(node: Json, doc: Json, seen: readonly string[] = []): Json {
  if (Array.isArray(node)) return node.map((n) => inline(n, doc, seen));
  if (node === null || typeof node !== 'object') return node;
  const ref = node.$ref;
  if (typeof ref === 'string' && ref.startsWith('#/') && !seen.includes(ref)) return inline(at(doc, ref.slice(1)), doc, [...seen, ref]);
  return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, inline(v, doc, seen)]));
}

// What a schema says about a field, without what only explains it or what we added for our checks.
const ANNOTATIONS = new Set(['title', 'description', 'examples', 'example', 'additionalProperties', '$schema', '$comment']);
function essentials(node: Json): Json {
  if (Array.isArray(node)) return node.map(essentials);
  if (node === null || typeof node !== 'object') return node;
  const out: Record<string, Json> = {};
  for (const k of Object.keys(node).sort()) if (!ANNOTATIONS.has(k) && !k.startsWith('x-')) out[k] = essentials(node[k]!);
  if (Array.isArray(out.required)) out.required = [...(out.required as string[])].sort();
  return out;
}

const pretty = (j: Json) => `${JSON.stringify(j, null, 2)}\n`;

/** Every property name a request schema mentions, at any depth. */
function fieldNames(node: Json, into = new Set<string>()): Set<string> {
  if (Array.isArray(node)) node.forEach((n) => fieldNames(n, into));
  else if (node && typeof node === 'object') {
    const props = node.properties;
    if (props && typeof props === 'object' && !Array.isArray(props)) Object.keys(props).forEach((k) => into.add(k));
    Object.values(node).forEach((n) => fieldNames(n, into));
  }
  return into;
}

async function refreshOne(name: string, c: StoredContract): Promise<Finding> {
  const r = c.source.refresh;
  if (!r) return { contract: name, state: 'no-recipe', text: 'no source.refresh: read its source again by hand' };
  if (r.github && r.path) {
    if (!c.source.commit) return { contract: name, state: 'no-recipe', text: 'a repository source needs source.commit' };
    const cut = (text: string) => (r.pointer ? pretty(inline(at(parseDocument(text, r.path!), r.pointer), parseDocument(text, r.path!))) : text);
    const [then, now] = await Promise.all([get(`${RAW_BASE}/${r.github}/${c.source.commit}/${r.path}`), get(`${RAW_BASE}/${r.github}/HEAD/${r.path}`)]);
    const [a, b] = [cut(then), cut(now)];
    return a === b
      ? { contract: name, state: 'unchanged', text: `unchanged since ${c.source.commit.slice(0, 12)}` }
      : { contract: name, state: 'changed', text: createTwoFilesPatch(`${r.path}@${c.source.commit.slice(0, 12)}`, `${r.path}@HEAD`, a, b) };
  }
  if (r.url && r.compare === 'body') {
    const doc = JSON.parse(await get(r.url)) as Json;
    const published = pretty(essentials(inline(r.pointer ? at(doc, r.pointer) : doc, doc)));
    const stored = pretty(essentials(c.request.body ?? null));
    return published === stored
      ? { contract: name, state: 'unchanged', text: 'the published schema matches the stored request body' }
      : { contract: name, state: 'changed', text: createTwoFilesPatch('stored request body', r.url, stored, published) };
  }
  if (r.url && r.compare === 'response') {
    const doc = JSON.parse(await get(r.url)) as Json;
    const status = r.status ?? '200';
    const published = pretty(essentials(inline(r.pointer ? at(doc, r.pointer) : doc, doc)));
    const stored = pretty(essentials(c.responses?.[status] ?? null));
    return published === stored
      ? { contract: name, state: 'unchanged', text: `the published schema matches the stored ${status} answer` }
      : { contract: name, state: 'changed', text: createTwoFilesPatch(`stored ${status} answer`, r.url, stored, published) };
  }
  if (r.url && r.page) {
    const text = await get(r.url);
    // A whole word: `image_url` is not found inside `start_image_url`.
    const shown = (f: string) => new RegExp(`(^|[^\\w])${f.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}($|[^\\w])`).test(text);
    const missing = [...fieldNames([c.request.body ?? null, c.request.query ?? null])].filter((f) => !shown(f));
    return missing.length
      ? { contract: name, state: 'changed', text: `${r.url} no longer names: ${missing.join(', ')}; read the page again` }
      : { contract: name, state: 'unchanged', text: 'the page still names every field' };
  }
  return { contract: name, state: 'no-recipe', text: 'source.refresh is not one of the recipes in test/contracts/README.md' };
}

export async function refreshContracts(o: { dir: string; provider?: string }): Promise<Finding[]> {
  const providers = fs
    .readdirSync(o.dir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && (!o.provider || d.name === o.provider))
    .map((d) => d.name)
    .sort();
  const findings: Finding[] = [];
  for (const p of providers) {
    for (const file of fs.readdirSync(path.join(o.dir, p)).filter((f) => f.endsWith('.json')).sort()) {
      const name = `${p}/${file.slice(0, -5)}`;
      const c = JSON.parse(fs.readFileSync(path.join(o.dir, p, file), 'utf8')) as StoredContract;
      findings.push(await refreshOne(name, c).catch((e: unknown): Finding => ({ contract: name, state: 'unreadable', text: e instanceof Error ? e.message : String(e) })));
    }
  }
  return findings;
}

if (import.meta.main) {
  const args = process.argv.slice(2);
  const flag = (n: string) => (args.includes(n) ? args[args.indexOf(n) + 1] : undefined);
  const findings = await refreshContracts({ dir: flag('--dir') ?? import.meta.dirname, ...(flag('--provider') ? { provider: flag('--provider')! } : {}) });
  for (const f of findings) {
    process.stdout.write(`${f.contract}: ${f.state}${f.state === 'changed' ? '' : `: ${f.text}`}\n`);
    if (f.state === 'changed') process.stdout.write(`${f.text.replace(/^/gm, '    ')}\n`);
  }
  const count = (s: Finding['state']) => findings.filter((f) => f.state === s).length;
  process.stdout.write(`\n${findings.length} contracts: ${count('unchanged')} unchanged, ${count('changed')} changed, ${count('unreadable')} unreadable, ${count('no-recipe')} without a recipe\n`);
  process.exitCode = count('unreadable') ? 2 : count('changed') ? 1 : 0;
}
