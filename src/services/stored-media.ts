import type { Readable } from 'node:stream';
import { fileTypeStream } from 'file-type';
import { SNIFF_BYTES } from '../adapters/media/sniff.ts';
import { openDownload, type DownloadOptions } from '../adapters/net/download.ts';
import type { Storage } from '../adapters/storage/storage.ts';

/** What the first bytes of a file say it is; headers and names are never trusted. */
export interface SniffedType {
  mime: string;
  ext: string;
}

export interface StoreSniffedOptions {
  /** The key the file goes under, once its type is known (keys carry the extension). */
  keyFor: (type: SniffedType) => string;
  /** Why a file of this type (or of no known type) is not taken, as the error to throw; undefined takes it. */
  refuse: (type: SniffedType | undefined) => Error | undefined;
  /** Counted as the bytes arrive: past it nothing is stored. */
  maxBytes: number;
  tooLarge?: () => Error;
}

/**
 * Media from a stream into storage without holding it: the type is read from the first bytes
 * (the rest passes through untouched), a refused type stores nothing and stops the source, and
 * the storage backend writes the file whole or not at all.
 */
export async function storeSniffed(storage: Pick<Storage, 'putStream'>, source: Readable, o: StoreSniffedOptions): Promise<SniffedType & { key: string; size: number }> {
  let sniffed;
  try {
    sniffed = await fileTypeStream(source, { sampleSize: SNIFF_BYTES });
  } catch (e) {
    stop(source);
    throw e;
  }
  const type = sniffed.fileType ? { mime: sniffed.fileType.mime, ext: sniffed.fileType.ext } : undefined;
  const refusal = o.refuse(type);
  if (refusal || !type) {
    stop(sniffed);
    stop(source);
    throw refusal ?? new Error('the file type is unknown');
  }
  const key = o.keyFor(type);
  const { size } = await storage.putStream(key, sniffed, { contentType: type.mime, maxBytes: o.maxBytes, ...(o.tooLarge ? { tooLarge: o.tooLarge } : {}) });
  return { ...type, key, size };
}

/** A download (through the SSRF-safe downloader) streamed into storage as storeSniffed does. */
export async function storeDownload(storage: Pick<Storage, 'putStream'>, url: string, download: DownloadOptions, o: Omit<StoreSniffedOptions, 'maxBytes'>): Promise<SniffedType & { key: string; size: number }> {
  const { body } = await openDownload(url, download);
  return storeSniffed(storage, body, { ...o, maxBytes: download.maxBytes });
}

/** Ends a stream we will not read; an error it emits on the way out is not an uncaught exception. */
function stop(stream: Readable): void {
  stream.on('error', () => {});
  stream.destroy();
}
