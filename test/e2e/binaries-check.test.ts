import fs from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, spawnCli, type LongRunning } from '../support/cli-run.ts';

// The start-up check of the binaries a process needs: a binary that cannot run stops the start
// with its name and the repair, before the service listens, the worker starts or initdb runs.

// The npm packages' binaries, whatever FFMPEG_PATH / FFPROBE_PATH the test run itself was given.
const require = createRequire(import.meta.url);
const BUNDLED_FFMPEG = (require('@ffmpeg-installer/ffmpeg') as { path: string }).path;
const BUNDLED_FFPROBE = (require('@ffprobe-installer/ffprobe') as { path: string }).path;

// Nothing listens on port 1: a process that got past the check fails fast on its database.
const NO_DATABASE = 'postgres://adforge:x@127.0.0.1:1/adforge';

let dir: string;
let unexecutable: string;
const children: LongRunning[] = [];

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'adforge-binaries-'));
  await fs.chmod(dir, 0o755);
  // A copy of the real ffprobe as a package whose install step did not run leaves it: no execute bit.
  unexecutable = path.join(dir, 'ffprobe');
  await fs.copyFile(BUNDLED_FFPROBE, unexecutable);
  await fs.chmod(unexecutable, 0o644);
});

afterAll(async () => {
  for (const c of children) if (c.running()) c.child.kill('SIGKILL');
  await Promise.all(children.map((c) => c.waitForExit(5_000)));
  if (dir) await fs.rm(dir, { recursive: true, force: true });
});

/** A stand-in ffmpeg that only answers `-version` with `text`. */
async function fakeFfmpeg(name: string, text: string): Promise<string> {
  const file = path.join(dir, name);
  await fs.writeFile(file, `#!/bin/sh\ncat <<'EOF'\n${text}\nEOF\n`, { mode: 0o755 });
  return file;
}

describe('a binary that cannot run stops the start, naming the file and the repair', () => {
  for (const command of ['serve', 'worker'] as const) {
    it(`adforge ${command}: FFPROBE_PATH without the execute bit`, async () => {
      const r = await runCli([command], { DATABASE_URL: NO_DATABASE, FFPROBE_PATH: unexecutable, LOG_LEVEL: 'warn' });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`ffprobe ${unexecutable} (FFPROBE_PATH) is not executable`);
      expect(r.stderr).toContain(`chmod a+x ${unexecutable}`);
      // Stopped before the database was tried.
      expect(r.stderr + r.stdout).not.toMatch(/ECONNREFUSED/);
    });
  }

  it('adforge start: stops before the embedded PostgreSQL is initialised', async () => {
    const dataDir = path.join(dir, 'data');
    const s = spawnCli(['start'], { DATA_DIR: dataDir, HOST: '127.0.0.1', PORT: '0', FFPROBE_PATH: unexecutable, LOG_LEVEL: 'warn' });
    children.push(s);
    const exit = await s.waitForExit(20_000);
    expect(exit, s.output().stderr).toEqual({ code: 1, signal: null });
    expect(s.output().stderr).toContain(`chmod a+x ${unexecutable}`);
    await expect(fs.access(path.join(dataDir, 'pg'))).rejects.toThrow();
  });

  it('FFMPEG_PATH naming no file', async () => {
    const missing = path.join(dir, 'no-such-ffmpeg');
    const r = await runCli(['worker'], { DATABASE_URL: NO_DATABASE, FFMPEG_PATH: missing, LOG_LEVEL: 'warn' });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`ffmpeg ${missing} (FFMPEG_PATH) does not exist`);
  });

  it('an ffmpeg that is executable but does not run (a library it needs is missing)', async () => {
    const broken = path.join(dir, 'ffmpeg-broken');
    await fs.writeFile(broken, '#!/bin/sh\necho "ffmpeg: error while loading shared libraries: libavdevice.so.59" >&2\nexit 127\n', { mode: 0o755 });
    const r = await runCli(['serve'], { DATABASE_URL: NO_DATABASE, FFMPEG_PATH: broken, LOG_LEVEL: 'warn' });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`ffmpeg ${broken} (FFMPEG_PATH) does not run`);
    expect(r.stderr).toContain('libavdevice.so.59');
  });

  it('FFMPEG_PATH that is not an absolute path is a configuration error', async () => {
    const r = await runCli(['worker'], { DATABASE_URL: NO_DATABASE, FFMPEG_PATH: 'ffmpeg', LOG_LEVEL: 'warn' });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/FFMPEG_PATH: must be an absolute path/);
  });
});

describe('an ffmpeg older than 5.1 is named in one warning at start', () => {
  it('the bundled 2018 build is named with its version and year, and how to use a maintained one', async () => {
    const r = await runCli(['worker'], { DATABASE_URL: NO_DATABASE, LOG_LEVEL: 'warn', FFMPEG_PATH: undefined, FFPROBE_PATH: undefined });
    const warnings = r.stdout.split('\n').filter((l) => l.includes('"level":40'));
    const about = warnings.filter((l) => l.includes('older than 5.1'));
    expect(about, r.stdout).toHaveLength(1);
    const line = JSON.parse(about[0]!) as { msg: string; ffmpeg: string };
    expect(line.ffmpeg).toBe(BUNDLED_FFMPEG);
    expect(line.msg).toContain('4.1');
    expect(line.msg).toContain('2018');
    expect(line.msg).toContain('FFMPEG_PATH');
    expect(line.msg).toContain('FFPROBE_PATH');
  });

  it('a distribution build older than 5.1 is named; 5.1 and later are not', async () => {
    const old = await fakeFfmpeg(
      'ffmpeg-4.4',
      'ffmpeg version 4.4.2-0ubuntu0.22.04.1 Copyright (c) 2000-2021 the FFmpeg developers\nlibavutil      56. 70.100 / 56. 70.100',
    );
    const current = await fakeFfmpeg(
      'ffmpeg-5.1',
      'ffmpeg version 5.1.9-0+deb12u1 Copyright (c) 2000-2026 the FFmpeg developers\nlibavutil      57. 28.100 / 57. 28.100',
    );
    const [a, b] = await Promise.all([
      runCli(['worker'], { DATABASE_URL: NO_DATABASE, FFMPEG_PATH: old, FFPROBE_PATH: BUNDLED_FFPROBE, LOG_LEVEL: 'warn' }),
      runCli(['worker'], { DATABASE_URL: NO_DATABASE, FFMPEG_PATH: current, FFPROBE_PATH: BUNDLED_FFPROBE, LOG_LEVEL: 'warn' }),
    ]);
    const olderThan = (out: string) => out.split('\n').filter((l) => l.includes('older than 5.1'));
    expect(olderThan(a.stdout), a.stdout + a.stderr).toHaveLength(1);
    expect(olderThan(a.stdout)[0]).toContain('4.4.2');
    expect(olderThan(a.stdout)[0]).toContain('2021');
    expect(olderThan(b.stdout), b.stdout).toHaveLength(0);
    // Both got past the check to the database.
    expect(a.stderr).toMatch(/ECONNREFUSED/);
    expect(b.stderr).toMatch(/ECONNREFUSED/);
  });
});
