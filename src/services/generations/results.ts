import type { Readable } from 'node:stream';
import { probeMedia } from '../../adapters/engines/ffmpeg.ts';
import { mediaTypeOf } from '../../adapters/media/sniff.ts';
import type { Storage } from '../../adapters/storage/storage.ts';
import type { GenerationRow } from '../../db/types.ts';

/** One finished file of a generation, as its source hands it over to be stored. */
export interface ResultFile {
  mime: string;
  ext: string;
  /** Its bytes, opened when its turn comes: results are stored one after the other. */
  open(): Readable;
  /** Where the bytes lie on this machine, when they do (the local renderer's files): probed there rather than read back from storage. */
  path?: string;
}

export interface StoreLimits {
  /** The most one file may hold, counted as its bytes arrive; past it nothing more is stored. */
  maxBytes: number;
  tooLarge: () => Error;
}

/** Local disk storage also says where a stored file lies: a result is then measured there, without a copy. */
type ResultStorage = Pick<Storage, 'putStream' | 'openStream' | 'delete'> & { pathOf?: (key: string) => string };

/**
 * A generation's finished files into storage, under keys of their own, streamed (never whole in
 * memory), and what only the media can tell: a video's duration, read with ffprobe from a file
 * (the rendered one, else the stored one on local disk, else a temp copy of the stored one on S3).
 * The same for the local engine and every upstream provider. On a failure the files stored so far
 * are removed again.
 */
export async function storeResults(
  storage: ResultStorage,
  g: Pick<GenerationRow, 'id' | 'team_id'>,
  files: readonly ResultFile[],
  limits: StoreLimits,
): Promise<{ keys: string[]; meta: Record<string, unknown>; bytes: number }> {
  const keys: string[] = [];
  let bytes = 0;
  try {
    for (const [i, file] of files.entries()) {
      const key = `generations/${g.team_id}/${g.id}/${i + 1}.${file.ext}`;
      keys.push(key);
      const { size } = await storage.putStream(key, file.open(), { contentType: file.mime, ...limits });
      bytes += size;
    }
  } catch (e) {
    await Promise.all(keys.map((k) => storage.delete(k).catch(() => {})));
    throw e;
  }
  const meta: Record<string, unknown> = {};
  const first = files.findIndex((f) => f.mime.startsWith('video/'));
  if (first >= 0) {
    const seconds = await videoSeconds(storage, files[first]!, keys[first]!).catch(() => null);
    if (seconds) meta.duration = Math.round(seconds * 100) / 100;
  }
  return { keys, meta, bytes };
}

async function videoSeconds(storage: ResultStorage, file: ResultFile, key: string): Promise<number | null> {
  const type = mediaTypeOf(file, 'video');
  // The type was sniffed where the file came from (a provider's bytes) or is the renderer's own.
  const where = file.path ?? storage.pathOf?.(key);
  if (where && type) return (await probeMedia({ path: where, demuxer: type.demuxer })).durationSeconds;
  const stored = await storage.openStream(key);
  return stored && (await probeMedia(stored.stream, { kind: 'video' })).durationSeconds;
}
