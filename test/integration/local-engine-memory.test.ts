import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runFfmpeg } from '../../src/adapters/engines/ffmpeg.ts';

const CHILD = fileURLToPath(new URL('../support/local-edit-memory.ts', import.meta.url));
let dir: string;
let small: string;
let input: string;

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'adforge-local-memory-'));
  input = path.join(dir, 'large.mov');
  small = path.join(dir, 'small.mov');
  // Uncompressed frames make a large file in a moment while the render stays small (160x120).
  const make = (seconds: number, file: string) =>
    runFfmpeg(['-f', 'lavfi', '-i', `testsrc=size=160x120:rate=240:duration=${seconds}`, '-f', 'lavfi', '-i', `sine=duration=${seconds}`, '-pix_fmt', 'argb', '-c:v', 'rawvideo', '-c:a', 'pcm_s16le', file]);
  await Promise.all([make(10, input), make(1, small)]);
}, 60_000);

afterAll(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

describe('the local engine and a large input video', () => {
  it('edits and stores a video of ~180 MB with the worker\'s peak memory growing by far less than the file', async () => {
    const [tmpRoot, storageRoot] = await Promise.all(['tmp-', 'files-'].map((p) => fs.mkdtemp(path.join(dir, p))));
    const { stdout } = await promisify(execFile)(process.execPath, [CHILD, small, input, tmpRoot!, storageRoot!], { timeout: 240_000 });
    const out = JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as {
      inputBytes: number;
      hwmBeforeKb: number;
      hwmAfterKb: number;
      stored: { keys: string[]; meta: { duration?: number }; bytes: number };
    };
    expect(out.inputBytes).toBeGreaterThan(150 * 1024 * 1024);
    // Holding the input whole adds at least its size to the peak (201 MB here before it streamed).
    // Streamed, the peak grows by what the collector has not yet reclaimed of the passing chunks:
    // ~50 MB, the same for a file twice this size.
    expect((out.hwmAfterKb - out.hwmBeforeKb) * 1024).toBeLessThan(out.inputBytes / 2);
    // The edit is whole: stored, its length the source's (10 s), and the render's temp dirs gone.
    expect(out.stored.keys).toHaveLength(1);
    expect((await fs.stat(path.join(storageRoot!, out.stored.keys[0]!))).size).toBe(out.stored.bytes);
    expect(out.stored.meta.duration).toBeCloseTo(10, 0);
    expect(await fs.readdir(tmpRoot!)).toEqual([]);
  }, 300_000);
});
