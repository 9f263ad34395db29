import sharp from 'sharp';
import { UpstreamError } from '../upstream.ts';

/*
 * The images /images/edits takes from a GPT image model: png, webp or jpg, each under 50 MB
 * (CreateImageEditRequest.image, test/contracts/openai/images-edits.json). What an input's host
 * labelled it says little (an image URL may answer application/octet-stream, or a GIF), so the
 * bytes decide: those three go as they are, under their true type; any other image is re-encoded
 * as PNG; bytes that are no image are refused before OpenAI is asked (and bills).
 */
const TAKEN: Readonly<Record<string, string>> = { png: 'image/png', jpeg: 'image/jpeg', webp: 'image/webp' };
const MAX_EDIT_IMAGE_BYTES = 50 * 1024 * 1024;
const MAX_PIXELS = 64_000_000;

export async function editImage(bytes: Buffer): Promise<{ bytes: Buffer; type: string }> {
  let out: { bytes: Buffer; type: string };
  try {
    const { format } = await sharp(bytes, { limitInputPixels: MAX_PIXELS }).metadata();
    const type = format ? TAKEN[format] : undefined;
    out = type ? { bytes, type } : { bytes: await sharp(bytes, { limitInputPixels: MAX_PIXELS }).rotate().png().toBuffer(), type: 'image/png' };
  } catch (e) {
    throw new UpstreamError('refused', 'an input image could not be read as an image', { cause: e });
  }
  if (out.bytes.length >= MAX_EDIT_IMAGE_BYTES) throw new UpstreamError('refused', 'an input image is larger than the 50 MB OpenAI takes');
  return out;
}
