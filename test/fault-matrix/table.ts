import fs from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { FAULTS, type FaultId } from './faults.ts';

export interface CellResult {
  call: string;
  fault: FaultId;
  /** The table's word for what happened ('n/a' where the fault does not apply). */
  outcome: string;
  /** The invariants it broke, each a short name and what was seen. */
  broken: Array<{ short: string; detail: string }>;
  /** How the generation ended, in its own words. */
  detail?: string;
}

export const DOCS = path.resolve(import.meta.dirname, '../../docs/providers.md');
const begin = (provider: string) => `<!-- fault-matrix:${provider} -->`;
const end = (provider: string) => `<!-- /fault-matrix:${provider} -->`;

/** One provider's matrix as markdown: a row per fault, a column per call, each cell its outcome and what it broke. */
export function renderTable(provider: string, calls: readonly string[], results: readonly CellResult[]): string {
  const cell = (call: string, fault: FaultId) => {
    const r = results.find((x) => x.call === call && x.fault === fault);
    if (!r) return '(not run)';
    return r.broken.length ? `${r.outcome} **✗ ${r.broken.map((b) => b.short).join(', ')}**` : r.outcome;
  };
  const lines = [
    `| ${provider}: fault | ${calls.map((c) => c.replaceAll('|', '\\|')).join(' | ')} |`,
    `|---|${calls.map(() => '---').join('|')}|`,
    ...FAULTS.map((f) => `| ${f.label} | ${calls.map((c) => cell(c, f.id)).join(' | ')} |`),
  ];
  return lines.join('\n');
}

/** The provider's table as docs/providers.md holds it, or undefined when it holds none yet. */
export async function documentedTable(provider: string): Promise<string | undefined> {
  const text = await fs.readFile(DOCS, 'utf8');
  const from = text.indexOf(begin(provider));
  const to = text.indexOf(end(provider));
  if (from < 0 || to < from) return undefined;
  return text.slice(from + begin(provider).length, to).trim();
}

/**
 * Writes the provider's table into docs/providers.md between its markers (added at the end of the
 * matrix section when absent). Test files run two at a time: a directory made and removed around
 * the read and write keeps two of them from writing over each other.
 */
export async function writeDocumentedTable(provider: string, table: string): Promise<void> {
  const lock = `${DOCS}.lock`;
  for (let i = 0; ; i++) {
    try {
      await fs.mkdir(lock);
      break;
    } catch {
      if (i > 200) throw new Error(`${lock} is held: remove it if no test run is writing the docs`);
      await sleep(50);
    }
  }
  try {
    const text = await fs.readFile(DOCS, 'utf8');
    const block = `${begin(provider)}\n${table}\n${end(provider)}`;
    const from = text.indexOf(begin(provider));
    const to = text.indexOf(end(provider));
    let next: string;
    if (from >= 0 && to > from) next = text.slice(0, from) + block + text.slice(to + end(provider).length);
    else {
      const anchor = '<!-- /fault-matrix -->';
      const at = text.indexOf(anchor);
      if (at < 0) throw new Error(`docs/providers.md has no ${anchor} marker to put the ${provider} table before`);
      next = `${text.slice(0, at)}${block}\n\n${text.slice(at)}`;
    }
    await fs.writeFile(DOCS, next);
  } finally {
    await fs.rmdir(lock);
  }
}
