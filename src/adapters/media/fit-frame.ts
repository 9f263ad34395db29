import sharp from 'sharp';

/**
 * An image cropped and scaled to exactly width x height (centre kept), as PNG: for providers
 * whose first frame must match the video's size (OpenAI's `input_reference`). Null when the
 * bytes are not an image sharp can read.
 */
export async function fitFrame(bytes: Buffer, width: number, height: number): Promise<Buffer | null> {
  try {
    return await sharp(bytes, { limitInputPixels: 64_000_000 }).rotate().resize(width, height, { fit: 'cover', position: 'centre' }).png().toBuffer();
  } catch {
    return null;
  }
}
