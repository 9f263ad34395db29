import { imageAs } from '../../media/image-as.ts';
import { sniffMedia, ACCEPTED_MEDIA, type MediaKind } from '../../media/sniff.ts';
import { UpstreamError, type UpstreamFile } from '../engine-contract.ts';
import type { Graph, Mapping } from './workflows.ts';

/*
 * The files a workflow loads, made safe before they reach a GPU server. What a user's URL served
 * is never uploaded as it came: an image is decoded and written again as PNG (at most 64
 * megapixels, turned upright, its metadata dropped), as every other engine does through
 * imageAs; a video or an audio file must be a container adforge takes, by its bytes. Their names
 * are the prompt's id and slot, in input/adforge/, so the end of the generation can find and
 * empty them again (comfyui-release.ts).
 */

/** ComfyUI's LoadImage opens any image PIL reads; one format for all keeps the names predictable. */
export async function inputImage(file: UpstreamFile, signal: AbortSignal): Promise<Buffer> {
  const { bytes } = await file.read(signal);
  try {
    return (await imageAs(bytes, [])).bytes;
  } catch (e) {
    const tooLarge = /pixel limit/i.test((e as Error).message);
    throw new UpstreamError('refused', tooLarge ? 'an input image is larger than 64 megapixels' : 'an input image could not be read as an image', { cause: e });
  }
}

export async function inputMedia(file: UpstreamFile, kind: MediaKind, signal: AbortSignal): Promise<{ bytes: Buffer; ext: string; mime: string }> {
  const { bytes } = await file.read(signal);
  const type = await sniffMedia(bytes, kind);
  if (!type) throw new UpstreamError('refused', `the input ${kind} is not ${ACCEPTED_MEDIA[kind]}`);
  return { bytes, ext: type.ext, mime: type.mime };
}

/** The folder of input/ adforge uploads into. */
export const INPUT_FOLDER = 'adforge';
export const imageName = (promptId: string, slot: number) => `${promptId}-${slot + 1}.png`;

/** The input files a filled graph loads, read back from its load nodes (a prompt found on a server after a lost answer). */
export function inputsOf(mapping: Mapping, graph: Graph): string[] {
  const slots = [...mapping.inputs.images, mapping.inputs.video, mapping.inputs.audio].filter((s): s is NonNullable<typeof s> => Boolean(s));
  return slots.map((s) => graph[s.node]?.inputs[s.input]).filter((v): v is string => typeof v === 'string' && v.startsWith(`${INPUT_FOLDER}/`));
}
