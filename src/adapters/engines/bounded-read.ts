import { readAtMost } from '../net/read-at-most.ts';
import type { UpstreamFile } from './engine-contract.ts';

/**
 * An input a provider takes inline, read whole but never past the provider's own limit: a file
 * over it is refused from its announced size or once that many bytes arrived, not after reading
 * all of it.
 */
export async function readBounded(file: UpstreamFile, signal: AbortSignal, maxBytes: number, tooLarge: () => Error): Promise<{ bytes: Buffer; mime: string }> {
  const { stream, mime, size } = await file.open(signal);
  if (size !== undefined && size > maxBytes) {
    stream.on('error', () => {});
    stream.destroy();
    throw tooLarge();
  }
  return { bytes: await readAtMost(stream, maxBytes, tooLarge), mime };
}
