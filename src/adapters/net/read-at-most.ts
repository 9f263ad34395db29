import type { Readable } from 'node:stream';

/**
 * A response body read whole, counting what actually arrives: a missing or understated
 * Content-Length cannot smuggle in more than `maxBytes`. Past it the body is dropped and the
 * caller's error thrown. The error listener goes on before destroying: an undici body destroyed
 * unread emits an AbortError, and unheard that would crash the process.
 */
export async function readAtMost(body: Readable, maxBytes: number, tooLarge: () => Error): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += (chunk as Buffer).length;
    if (size > maxBytes) {
      body.on('error', () => {});
      body.destroy();
      throw tooLarge();
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks, size);
}

/** A body's JSON, or undefined when it is not JSON (an error page, an empty answer). */
export function jsonOrUndefined(raw: Buffer): unknown {
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch {
    return undefined;
  }
}
