import { Readable } from 'node:stream';
import { fileTypeFromBuffer } from 'file-type';

/** Raster formats the ad pipeline can decode; anything else (SVG, PDF, text, ...) is refused. */
const acceptedImageMimes = new Set(['image/png', 'image/jpeg', 'image/webp', 'image/gif', 'image/avif']);

/** Identifies an image from its magic bytes alone; headers and file names are never trusted. */
export async function sniffImage(bytes: Buffer): Promise<{ mime: string; ext: string } | null> {
  const type = await fileTypeFromBuffer(bytes);
  if (!type || !acceptedImageMimes.has(type.mime)) return null;
  return { mime: type.mime, ext: type.ext };
}

/** The ffmpeg demuxers input media may be opened with: one per container we take. */
export type Demuxer = 'mov' | 'matroska' | 'mp3' | 'wav' | 'ogg' | 'flac';

/**
 * Containers taken as input media, by sniffed MIME type, with the demuxer that opens them. Video
 * inputs: MP4 (and M4V), QuickTime MOV, WebM and Matroska. Audio inputs: those (a video's sound
 * track) and MP3, WAV, Ogg (Vorbis, Opus), FLAC and M4A. Nothing else reaches ffmpeg: no playlist
 * (HLS, DASH), no raw elementary stream, no image sequence, no format with external references.
 */
const videoContainers: Record<string, Demuxer> = {
  'video/mp4': 'mov',
  'video/x-m4v': 'mov',
  'video/quicktime': 'mov',
  'video/webm': 'matroska',
  'video/matroska': 'matroska',
};
const audioContainers: Record<string, Demuxer> = {
  ...videoContainers,
  'audio/mpeg': 'mp3',
  'audio/wav': 'wav',
  'audio/ogg': 'ogg',
  'audio/ogg; codecs=opus': 'ogg',
  'audio/flac': 'flac',
  'audio/x-m4a': 'mov',
  'audio/mp4': 'mov',
};

export type MediaKind = 'video' | 'audio';

/** What each kind takes, in words for an error message. */
export const ACCEPTED_MEDIA: Record<MediaKind, string> = {
  video: 'MP4, MOV, WebM or Matroska',
  audio: 'MP3, WAV, Ogg, FLAC, M4A, MP4, MOV, WebM or Matroska',
};

/**
 * Identifies input media from its magic bytes alone (never a name or a Content-Type), and the
 * demuxer ffmpeg must open it with; null for anything that is not a container we take.
 */
export async function sniffMedia(bytes: Uint8Array, kind: MediaKind): Promise<MediaType | null> {
  return mediaTypeOf(await fileTypeFromBuffer(bytes).catch(() => undefined), kind);
}

export interface MediaType {
  mime: string;
  ext: string;
  demuxer: Demuxer;
}

/** The container file-type found (from a whole buffer or a stream's first bytes), if it is one `kind` takes. */
export function mediaTypeOf(type: { mime: string; ext: string } | undefined, kind: MediaKind): MediaType | null {
  const demuxer = type && (kind === 'video' ? videoContainers : audioContainers)[type.mime];
  return demuxer ? { mime: type.mime, ext: type.ext, demuxer } : null;
}

/** file-type's own sample size: what it needs to tell every container we take apart. */
export const SNIFF_BYTES = 4100;

/**
 * Sniffs media from the first bytes of `stream` without holding more than them: answers the type
 * (null for a container `kind` does not take) and a stream of every byte, the first ones included.
 */
export async function sniffMediaStream(stream: Readable, kind: MediaKind): Promise<{ type: MediaType | null; stream: Readable }> {
  const chunks = stream[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  const head: Buffer[] = [];
  let seen = 0;
  while (seen < SNIFF_BYTES) {
    const next = await chunks.next();
    if (next.done) break;
    head.push(next.value);
    seen += next.value.length;
  }
  const first = Buffer.concat(head);
  async function* replay() {
    yield first;
    for (let next = await chunks.next(); !next.done; next = await chunks.next()) yield next.value;
  }
  const rest = Readable.from(replay(), { objectMode: false });
  // However it ends (read to the end, failed, or dropped unread when refused), the source is let go.
  rest.once('close', () => stream.destroy());
  return { type: await sniffMedia(first, kind), stream: rest };
}

/** What an uploaded file of this sniffed MIME type can be used as; null for a type no input takes. */
export function uploadKindOf(mime: string): 'image' | 'video' | 'audio' | null {
  if (acceptedImageMimes.has(mime)) return 'image';
  if (mime in videoContainers) return 'video';
  if (mime in audioContainers) return 'audio';
  return null;
}

/** Every MIME type an upload may be, for a presigned upload's declared type. */
export const UPLOAD_MIMES: readonly string[] = [...acceptedImageMimes, ...Object.keys(audioContainers)];
