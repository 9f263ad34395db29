import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { describe, expect, it } from 'vitest';
import { sampleHead } from '../../src/adapters/net/head-sample.ts';

const pieces = (...parts: string[]) => Readable.from(parts.map((p) => Buffer.from(p)), { objectMode: false });

describe('sampleHead', () => {
  it('answers the first bytes and then the whole content, head included, once', async () => {
    const { head, stream } = await sampleHead(pieces('abc', 'def', 'ghi'), 4);
    expect(head.toString()).toBe('abcd');
    expect(await text(stream)).toBe('abcdefghi');
  });

  it('takes a source shorter than the sample, and an empty one', async () => {
    const short = await sampleHead(pieces('ab'), 10);
    expect(short.head.toString()).toBe('ab');
    expect(await text(short.stream)).toBe('ab');
    const empty = await sampleHead(pieces(), 10);
    expect(empty.head.length).toBe(0);
    expect(await text(empty.stream)).toBe('');
  });

  it('reads the rest only as it is asked for, and passes a failure of the source on', async () => {
    let pulled = 0;
    const source = new Readable({
      read() {
        pulled++;
        if (pulled === 1) this.push(Buffer.alloc(8));
        else if (pulled < 4) this.push(Buffer.alloc(8));
        else this.destroy(new Error('cut off'));
      },
      highWaterMark: 1,
    });
    const { head, stream } = await sampleHead(source, 8);
    expect(head.length).toBe(8);
    const before = pulled;
    await new Promise((r) => setTimeout(r, 20));
    expect(pulled - before).toBeLessThanOrEqual(1);
    await expect(text(stream)).rejects.toThrow('cut off');
  });

  it('destroys the source when the stream is destroyed unread', async () => {
    const source = pieces('abc', 'def');
    const { stream } = await sampleHead(source, 2);
    stream.destroy();
    await new Promise((r) => setTimeout(r, 10));
    expect(source.destroyed).toBe(true);
  });
});
