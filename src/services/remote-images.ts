import { download, downloadErrorToAppError } from '../adapters/net/download.ts';
import { sniffImage } from '../adapters/media/sniff.ts';
import { AppError } from '../domain/errors.ts';

export const MAX_IMAGE_BYTES = 10 * 1024 * 1024;

export interface FetchedImage {
  bytes: Buffer;
  mime: string;
  ext: string;
}

/** Downloads a user's image URL under the SSRF rules and accepts it only if the bytes are an image. */
export function createImageFetcher(opts: { allowPrivate: boolean; timeoutMs?: number }) {
  return async function fetchImage(url: string, field: string): Promise<FetchedImage> {
    let bytes: Buffer;
    try {
      ({ bytes } = await download(url, {
        maxBytes: MAX_IMAGE_BYTES,
        allowPrivate: opts.allowPrivate,
        timeoutMs: opts.timeoutMs ?? 20_000,
      }));
    } catch (e) {
      throw downloadErrorToAppError(field, e);
    }
    const kind = await sniffImage(bytes);
    if (!kind) {
      throw new AppError('validation_error', `${field}: the file is not an image (PNG, JPEG, WebP, GIF or AVIF)`);
    }
    return { bytes, mime: kind.mime, ext: kind.ext };
  };
}
