import { fileTypeFromBuffer } from 'file-type';
import sharp from 'sharp';

const MAX_PIXELS = 64_000_000;

/**
 * An image in a format a provider takes: the bytes as they are when they already are one of
 * `taken` (by what they show, never by what their host said), else re-encoded as PNG, upright.
 * Throws when the bytes are no image sharp can read.
 */
export async function imageAs(bytes: Buffer, taken: readonly string[]): Promise<{ bytes: Buffer; mime: string }> {
  const mime = (await fileTypeFromBuffer(bytes))?.mime;
  if (mime && taken.includes(mime)) return { bytes, mime };
  return { bytes: await sharp(bytes, { limitInputPixels: MAX_PIXELS }).rotate().png().toBuffer(), mime: 'image/png' };
}
