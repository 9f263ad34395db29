import { fileTypeFromBuffer } from 'file-type';
import { download } from '../../adapters/net/download.ts';
import type { Storage } from '../../adapters/storage/storage.ts';

export interface MediaFetchDeps {
  storage: Storage;
  allowPrivate: boolean;
  maxBytes: number;
}

const ACCEPTED = /^(image|video)\//;

/**
 * Copies one media file of the source into storage under `keyBase` + its sniffed extension and
 * returns the key; null when it cannot be had (gone, too large, not an image or video), so one
 * broken file never fails a whole scrape. The bytes decide the type, not the source's headers.
 */
export async function copyMedia(deps: MediaFetchDeps, url: string, keyBase: string, onSkip: (why: string) => void): Promise<string | null> {
  let bytes: Buffer;
  try {
    ({ bytes } = await download(url, { maxBytes: deps.maxBytes, allowPrivate: deps.allowPrivate, timeoutMs: 120_000 }));
  } catch (e) {
    onSkip((e as Error).message);
    return null;
  }
  const type = await fileTypeFromBuffer(bytes);
  if (!type || !ACCEPTED.test(type.mime)) {
    onSkip(`not an image or video (${type?.mime ?? 'unknown type'})`);
    return null;
  }
  const key = `${keyBase}.${type.ext}`;
  await deps.storage.put(key, bytes, type.mime);
  return key;
}
