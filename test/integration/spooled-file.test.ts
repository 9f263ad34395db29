import { readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { withSpooledFile } from '../../src/adapters/engines/spooled-file.ts';
import type { UpstreamFile } from '../../src/adapters/engines/engine-contract.ts';
import { memoryFile } from '../support/upstream-file.ts';

const spools = async () => (await readdir(tmpdir())).filter((f) => f.startsWith('adforge-upload-'));
const tooLarge = () => new Error('too large');
/** A file whose stream does not say its size: only counting the bytes can stop it. */
const unsized = (bytes: Buffer): UpstreamFile => ({ ...memoryFile(bytes, 'video/mp4'), open: async () => ({ stream: Readable.from([bytes.subarray(0, 10), bytes.subarray(10)]), mime: 'video/mp4' }) });

describe('withSpooledFile', () => {
  it('hands over the input as a file-backed Blob of its size and type, and removes the file afterwards', async () => {
    const bytes = Buffer.alloc(300_000, 7);
    const before = await spools();
    const got = await withSpooledFile(memoryFile(bytes, 'video/mp4'), AbortSignal.timeout(5_000), { maxBytes: bytes.length, tooLarge }, async (f) => ({ size: f.size, type: f.blob.type, bytes: Buffer.from(await f.blob.arrayBuffer()) }));
    expect(got).toEqual({ size: bytes.length, type: 'video/mp4', bytes });
    expect(await spools()).toEqual(before);
  });

  it('refuses an input past the limit, by its announced size or by counting, without calling use, and leaves no file', async () => {
    const before = await spools();
    let used = 0;
    const use = async () => void used++;
    const big = Buffer.alloc(1001);
    await expect(withSpooledFile(memoryFile(big, 'video/mp4'), AbortSignal.timeout(5_000), { maxBytes: 1000, tooLarge }, use)).rejects.toThrow('too large');
    await expect(withSpooledFile(unsized(big), AbortSignal.timeout(5_000), { maxBytes: 1000, tooLarge }, use)).rejects.toThrow('too large');
    expect(used).toBe(0);
    expect(await spools()).toEqual(before);
  });
});
