import { Readable } from 'node:stream';
import type { UpstreamFile } from '../../src/adapters/engines/engine-contract.ts';

/** An input file held in the test: what the resolver hands an engine, read whole or as a stream. */
export const memoryFile = (bytes: Buffer, mime: string, url = 'https://example.com/input', onRead?: () => void): UpstreamFile => ({
  url,
  read: async () => {
    onRead?.();
    return { bytes, mime };
  },
  open: async () => {
    onRead?.();
    return { stream: Readable.from([bytes]), mime, size: bytes.length };
  },
});
