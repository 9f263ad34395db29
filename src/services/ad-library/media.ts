import { DownloadError } from '../../adapters/net/download.ts';
import type { Storage } from '../../adapters/storage/storage.ts';
import { storeDownload } from '../stored-media.ts';

export interface MediaFetchDeps {
  storage: Storage;
  allowPrivate: boolean;
  maxBytes: number;
}

const ACCEPTED = /^(image|video)\//;

class NotMedia extends Error {}

/**
 * Copies one media file of the source into storage under `keyBase` + its sniffed extension and
 * returns the key; null when it cannot be had (gone, too large, not an image or video), so one
 * broken file never fails a whole scrape. The bytes decide the type, not the source's headers;
 * they stream from the socket to storage, and a refused file leaves nothing stored.
 */
export async function copyMedia(deps: MediaFetchDeps, url: string, keyBase: string, onSkip: (why: string) => void): Promise<string | null> {
  try {
    const stored = await storeDownload(
      deps.storage,
      url,
      { maxBytes: deps.maxBytes, allowPrivate: deps.allowPrivate, timeoutMs: 120_000 },
      {
        keyFor: (type) => `${keyBase}.${type.ext}`,
        refuse: (type) => (type && ACCEPTED.test(type.mime) ? undefined : new NotMedia(`not an image or video (${type?.mime ?? 'unknown type'})`)),
      },
    );
    return stored.key;
  } catch (e) {
    // A file that cannot be had is skipped; storage that fails fails the scrape, as any write would.
    if (!(e instanceof DownloadError || e instanceof NotMedia)) throw e;
    onSkip(e.message);
    return null;
  }
}
