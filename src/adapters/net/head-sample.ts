import { Readable } from 'node:stream';

/**
 * The first `bytes` of a stream (all of it when shorter), read before anything else, and a stream
 * of the whole content, head included, that reads the rest only as its consumer asks: a type can be
 * told from the head while the bytes still go to storage without being held. Destroying the
 * returned stream destroys the source.
 */
export async function sampleHead(source: Readable, bytes: number): Promise<{ head: Buffer; stream: Readable }> {
  const chunks: Buffer[] = [];
  let have = 0;
  const reader = source[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  let ended = false;
  while (have < bytes) {
    const next = await reader.next();
    if (next.done) {
      ended = true;
      break;
    }
    chunks.push(next.value);
    have += next.value.length;
  }
  const sampled = Buffer.concat(chunks);
  async function* whole(): AsyncGenerator<Buffer> {
    if (sampled.length > 0) yield sampled;
    if (ended) return;
    for (;;) {
      const next = await reader.next();
      if (next.done) return;
      yield next.value;
    }
  }
  const stream = Readable.from(whole(), { objectMode: false });
  stream.once('close', () => source.destroy());
  return { head: sampled.subarray(0, bytes), stream };
}
