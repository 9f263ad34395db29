import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { readBounded } from '../../src/adapters/engines/bounded-read.ts';
import type { UpstreamFile } from '../../src/adapters/engines/engine-contract.ts';
import { memoryFile } from '../support/upstream-file.ts';

const tooLarge = () => new Error('too large');
const signal = () => AbortSignal.timeout(5_000);

describe('readBounded', () => {
  it('reads an input up to the limit whole', async () => {
    const bytes = Buffer.alloc(1000, 3);
    expect(await readBounded(memoryFile(bytes, 'audio/mpeg'), signal(), 1000, tooLarge)).toEqual({ bytes, mime: 'audio/mpeg' });
  });

  it('refuses by the announced size without reading, and by counting when no size is announced, stopping the source', async () => {
    const announced = memoryFile(Buffer.alloc(1001), 'audio/mpeg');
    await expect(readBounded(announced, signal(), 1000, tooLarge)).rejects.toThrow('too large');
    let pulled = 0;
    const endless = Readable.from(
      (function* () {
        for (;;) {
          pulled++;
          yield Buffer.alloc(100);
        }
      })(),
      { objectMode: false },
    );
    const unsized: UpstreamFile = { ...announced, open: async () => ({ stream: endless, mime: 'audio/mpeg' }) };
    await expect(readBounded(unsized, signal(), 1000, tooLarge)).rejects.toThrow('too large');
    expect(endless.destroyed).toBe(true);
    expect(pulled).toBeLessThan(100);
  });
});
