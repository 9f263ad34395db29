import { createWriteStream, openAsBlob } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { byteLimit } from '../net/byte-limit.ts';
import type { UpstreamFile } from './engine-contract.ts';

export interface SpooledFile {
  /** Backed by the file on disk: a multipart part that undici streams with its length known. */
  blob: Blob;
  size: number;
  mime: string;
}

/**
 * An input streamed into a temp file for `use` (a provider's multipart upload wants the length up
 * front, and a form part read from disk is never held in memory), removed afterwards whatever
 * happens. Past `maxBytes` the copy stops with `tooLarge()`.
 */
export async function withSpooledFile<T>(file: UpstreamFile, signal: AbortSignal, o: { maxBytes: number; tooLarge: () => Error }, use: (spooled: SpooledFile) => Promise<T>): Promise<T> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'adforge-upload-'));
  try {
    const { stream, mime, size } = await file.open(signal);
    if (size !== undefined && size > o.maxBytes) {
      stream.on('error', () => {});
      stream.destroy();
      throw o.tooLarge();
    }
    const target = path.join(dir, 'input');
    const limit = byteLimit(o.maxBytes, o.tooLarge);
    await pipeline(stream, limit, createWriteStream(target), { signal });
    return await use({ blob: await openAsBlob(target, { type: mime }), size: limit.size(), mime });
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}
