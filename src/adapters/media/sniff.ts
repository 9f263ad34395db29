import { fileTypeFromBuffer } from 'file-type';

/** Raster formats the ad pipeline can decode; anything else (SVG, PDF, text, ...) is refused. */
const acceptedImageMimes = new Set(['image/png', 'image/jpeg', 'image/webp', 'image/gif', 'image/avif']);

/** Identifies an image from its magic bytes alone; headers and file names are never trusted. */
export async function sniffImage(bytes: Buffer): Promise<{ mime: string; ext: string } | null> {
  const type = await fileTypeFromBuffer(bytes);
  if (!type || !acceptedImageMimes.has(type.mime)) return null;
  return { mime: type.mime, ext: type.ext };
}
