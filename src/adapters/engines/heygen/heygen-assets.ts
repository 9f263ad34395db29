import { fileTypeFromBuffer } from 'file-type';
import { imageAs } from '../../media/image-as.ts';
import { UpstreamError } from '../engine-contract.ts';
import { HEYGEN_ASSET_MAX_BYTES, HEYGEN_ASSET_TYPES } from './heygen-map.ts';

/*
 * An input as POST /v3/assets takes it (test/contracts/heygen/upload-asset.json): HeyGen reads the
 * type from the bytes and takes png and jpeg images, mp3 and wav audio, at most 32 MB. A face may
 * be a WebP, GIF or AVIF (a product's image, say): it is sent as PNG. Speech in another format is
 * refused here, before anything is uploaded.
 */
export interface HeyGenAsset {
  bytes: Buffer;
  mime: string;
  filename: string;
}

const EXTENSIONS: Readonly<Record<string, string>> = { 'image/png': 'png', 'image/jpeg': 'jpg', 'audio/mpeg': 'mp3', 'audio/wav': 'wav' };

/** The type the bytes show, as HeyGen detects it; the declared one when they show none. */
async function detected(bytes: Buffer, declared: string): Promise<string> {
  return (await fileTypeFromBuffer(bytes))?.mime ?? declared;
}

function sized(a: HeyGenAsset, role: string): HeyGenAsset {
  if (a.bytes.length > HEYGEN_ASSET_MAX_BYTES) throw new UpstreamError('refused', `the ${role} is larger than the 32 MB HeyGen takes`);
  return a;
}

export async function faceAsset(bytes: Buffer, declared: string): Promise<HeyGenAsset> {
  let face: { bytes: Buffer; mime: string };
  try {
    face = await imageAs(bytes, HEYGEN_ASSET_TYPES.image);
  } catch (e) {
    const mime = await detected(bytes, declared);
    throw new UpstreamError('refused', `the face (${mime}) is not an image HeyGen can take (png or jpeg) nor one adforge can convert`, { cause: e });
  }
  return sized({ ...face, filename: `face.${EXTENSIONS[face.mime]}` }, 'face');
}

export async function speechAsset(bytes: Buffer, declared: string): Promise<HeyGenAsset> {
  const mime = await detected(bytes, declared);
  if (!(HEYGEN_ASSET_TYPES.audio as readonly string[]).includes(mime)) throw new UpstreamError('refused', `the speech is ${mime}; HeyGen takes mp3 or wav audio`);
  return sized({ bytes, mime, filename: `speech.${EXTENSIONS[mime]}` }, 'speech');
}
