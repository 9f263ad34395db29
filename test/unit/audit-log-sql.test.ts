import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

// The audit log is append-only for the service: no statement in the source changes or removes its
// lines; its repository inserts, reads, and purges through the database's audit_log_purge().
const ROOT = path.resolve(import.meta.dirname, '../..');
const REPOSITORY = 'src/repositories/audit-log.ts';

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = path.posix.join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(rel);
    return /\.(ts|js|mjs|cjs|sql)$/.test(e.name) ? [rel] : [];
  });
}

const stripComments = (s: string) => s.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:])\/\/.*$/gm, '$1');

describe('audit_log in the source', () => {
  const files = [...sourceFiles('src'), ...(fs.existsSync(path.join(ROOT, 'tasks')) ? sourceFiles('tasks') : [])];

  it('has no UPDATE, DELETE or TRUNCATE anywhere in src: the purge is the database function', () => {
    const offending = files.flatMap((f) => {
      const text = stripComments(fs.readFileSync(path.join(ROOT, f), 'utf8'));
      const hits = [
        /\bupdate\s+(only\s+)?("?public"?\.)?"?audit_log\b/i,
        /\bdelete\s+from\s+(only\s+)?("?public"?\.)?"?audit_log\b/i,
        /\btruncate\s+(table\s+)?(only\s+)?("?public"?\.)?"?audit_log\b/i,
        /\.(updateTable|deleteFrom|mergeInto|replaceInto)\s*\(\s*['"`]audit_log\b/,
        /\bsql\.(table|id|raw)\s*\(\s*['"`]audit_log\b/,
      ].filter((re) => re.test(text));
      return hits.length ? [`${f}: ${hits.join(', ')}`] : [];
    });
    expect(offending).toEqual([]);
  });

  it('the repository inserts and selects, and deletes only through audit_log_purge()', () => {
    const text = stripComments(fs.readFileSync(path.join(ROOT, REPOSITORY), 'utf8'));
    const statements = [...text.matchAll(/\b(insert\s+into|select\b[\s\S]*?\bfrom|update|delete|truncate|alter|drop)\s+[\s\S]{0,40}?\baudit_log\b/gi)].map((m) => m[1]!.split(/\s/)[0]!.toLowerCase());
    expect(new Set(statements)).toEqual(new Set(['insert', 'select']));
    expect(text).toMatch(/select audit_log_purge\(/);
  });
});
