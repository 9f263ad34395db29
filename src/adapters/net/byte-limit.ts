import { Transform } from 'node:stream';

/**
 * A pass-through that counts the bytes as they arrive and fails the stream with the caller's error
 * once more than `maxBytes` went by: a missing or understated Content-Length (or an upload that
 * never announced one) cannot bring in more. `size()` is what passed so far.
 */
export function byteLimit(maxBytes: number, tooLarge: () => Error): Transform & { size(): number } {
  let seen = 0;
  const limit = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      seen += chunk.length;
      if (seen > maxBytes) done(tooLarge());
      else done(null, chunk);
    },
  });
  return Object.assign(limit, { size: () => seen });
}
