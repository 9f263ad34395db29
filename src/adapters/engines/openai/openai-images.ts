import { imageAs } from '../../media/image-as.ts';
import { UpstreamError } from '../engine-contract.ts';

/*
 * The images /images/edits takes from a GPT image model: png, webp or jpg, each under 50 MB
 * (CreateImageEditRequest.image, test/contracts/openai/images-edits.json). What an input's host
 * labelled it says little (an image URL may answer application/octet-stream, or a GIF), so the
 * bytes decide: those three go as they are, under their true type; any other image is re-encoded
 * as PNG; bytes that are no image are refused before OpenAI is asked (and bills).
 */
const TAKEN = ['image/png', 'image/jpeg', 'image/webp'];
const MAX_EDIT_IMAGE_BYTES = 50 * 1024 * 1024;

export async function editImage(bytes: Buffer): Promise<{ bytes: Buffer; type: string }> {
  let out: { bytes: Buffer; mime: string };
  try {
    out = await imageAs(bytes, TAKEN);
  } catch (e) {
    throw new UpstreamError('refused', 'an input image could not be read as an image', { cause: e });
  }
  if (out.bytes.length >= MAX_EDIT_IMAGE_BYTES) throw new UpstreamError('refused', 'an input image is larger than the 50 MB OpenAI takes');
  return { bytes: out.bytes, type: out.mime };
}
