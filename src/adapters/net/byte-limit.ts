import { Readable, Transform, pipeline } from 'node:stream';

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

/**
 * `body` through byteLimit as a new stream: what breaks it (the limit, a cut connection, a timeout)
 * reaches the reader as `mapError(e)`, and a reader that stops early (destroys it) stops `body`.
 */
export function limitedStream(body: Readable, maxBytes: number, tooLarge: () => Error, mapError: (e: unknown) => Error): Readable {
  const limited = pipeline(body, byteLimit(maxBytes, tooLarge), () => {});
  return Readable.from(
    (async function* (): AsyncGenerator<Buffer> {
      try {
        yield* limited as AsyncIterable<Buffer>;
      } catch (e) {
        throw mapError(e);
      }
    })(),
    { objectMode: false },
  );
}
