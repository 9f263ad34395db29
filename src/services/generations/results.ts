import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { probeMedia } from '../../adapters/engines/ffmpeg.ts';
import { mediaTypeOf, SNIFF_BYTES, sniffMedia } from '../../adapters/media/sniff.ts';
import type { Storage } from '../../adapters/storage/storage.ts';
import type { GenerationRow } from '../../db/types.ts';
import { storeSniffed, type SniffedType } from '../stored-media.ts';

type Stored = { keys: string[]; meta: Record<string, unknown>; bytes: number };

/** Local disk storage also says where a stored file lies: a result is then measured there, without a copy. */
type ResultStorage = Pick<Storage, 'putStream' | 'openStream' | 'delete'> & { pathOf?: (key: string) => string };

const resultKey = (g: Pick<GenerationRow, 'id' | 'team_id'>, index: number, ext: string) => `generations/${g.team_id}/${g.id}/${index + 1}.${ext}`;

/** One finished file of a generation whose type its source knows (the local renderer's own files). */
export interface ResultFile {
  mime: string;
  ext: string;
  /** Its bytes, opened when its turn comes: results are stored one after the other. */
  open(): Readable;
  /** Where the bytes lie on this machine, when they do: probed there rather than read back from storage. */
  path?: string;
}

export interface StoreLimits {
  /** The most one file may hold, counted as its bytes arrive; past it nothing more is stored. */
  maxBytes: number;
  tooLarge: () => Error;
  /** The place of the first file among the generation's results (after those kept before it; 0 unless told). */
  first?: number;
}

export interface ResultStreamOptions extends StoreLimits {
  /** Why a result of this sniffed type is not taken (not media of the generation's kind), as the error to throw. */
  refuse: (type: SniffedType | undefined) => Error | undefined;
}

/**
 * A generation's finished files into storage, under keys of their own, streamed (never whole in
 * memory), and what only the media can tell (a video's duration). Files whose type the engine knows
 * go as they are; provider results (`storeResultStreams`) have theirs read from their first bytes.
 * On a failure the files stored so far are removed again.
 */
export async function storeResults(storage: ResultStorage, g: Pick<GenerationRow, 'id' | 'team_id'>, files: readonly ResultFile[], limits: StoreLimits): Promise<Stored> {
  const stored = await storeEach(storage, files, async (file, i) => {
    const key = resultKey(g, (limits.first ?? 0) + i, file.ext);
    const { size } = await storage.putStream(key, file.open(), { contentType: file.mime, ...limits });
    return { key, size, mime: file.mime, path: file.path };
  });
  return withDuration(storage, stored);
}

/**
 * Provider results streamed into storage one after the other, none held in memory: each is opened
 * only when the one before it is stored, its type read from its first bytes. A result that fails
 * half-way leaves nothing under its key (the storage backend writes whole or not at all).
 */
export async function storeResultStreams(storage: ResultStorage, g: Pick<GenerationRow, 'id' | 'team_id'>, opens: ReadonlyArray<() => Promise<Readable>>, o: ResultStreamOptions): Promise<Stored> {
  const stored = await storeEach(storage, opens, async (open, i) => {
    const s = await storeSniffed(storage, await open(), { keyFor: (t) => resultKey(g, (o.first ?? 0) + i, t.ext), refuse: o.refuse, maxBytes: o.maxBytes, tooLarge: o.tooLarge });
    return { key: s.key, size: s.size, mime: s.mime };
  });
  return withDuration(storage, stored);
}

interface StoredFile {
  key: string;
  size: number;
  mime: string;
  path?: string | undefined;
}

async function storeEach<T>(storage: ResultStorage, sources: readonly T[], store: (source: T, index: number) => Promise<StoredFile>): Promise<StoredFile[]> {
  const stored: StoredFile[] = [];
  try {
    for (const [i, source] of sources.entries()) stored.push(await store(source, i));
  } catch (e) {
    await Promise.all(stored.map((f) => storage.delete(f.key).catch(() => {})));
    throw e;
  }
  return stored;
}

async function withDuration(storage: ResultStorage, files: StoredFile[]): Promise<Stored> {
  const meta: Record<string, unknown> = {};
  const video = files.find((f) => f.mime.startsWith('video/'));
  if (video) {
    const seconds = await videoSeconds(storage, video).catch(() => undefined);
    if (seconds) meta.duration = Math.round(seconds * 100) / 100;
  }
  return { keys: files.map((f) => f.key), meta, bytes: files.reduce((n, f) => n + f.size, 0) };
}

/** Probed where the file lies (the rendered file, or the stored one on local disk), else from its two ends copied out of storage (S3). */
async function videoSeconds(storage: ResultStorage, file: StoredFile): Promise<number | undefined> {
  const where = file.path ?? storage.pathOf?.(file.key);
  const type = mediaTypeOf({ mime: file.mime, ext: '' }, 'video');
  if (where && type) return (await probeMedia({ path: where, demuxer: type.demuxer })).durationSeconds ?? undefined;
  return storedVideoDuration(storage, file.key);
}

// What ffprobe reads of a video for its duration: the container's header and index (an MP4's moov
// sits at one end or the other, a WebM's segment info at the start) and the first packets.
const PROBED_END_BYTES = 8 * 1024 * 1024;

/**
 * ffprobe reads a file (an MP4's index may sit at its end, out of a pipe's reach), so the stored
 * video's two ends are copied into a sparse temp file of its full size and probed there: a few MB
 * read back, whatever the video's size.
 */
async function storedVideoDuration(storage: Pick<Storage, 'openStream'>, key: string): Promise<number | undefined> {
  const head = await storage.openStream(key, { start: 0, end: PROBED_END_BYTES - 1 });
  if (!head) return undefined;
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'adforge-result-'));
  try {
    const file = path.join(dir, 'result');
    const handle = await fs.open(file, 'w');
    try {
      await handle.truncate(head.size);
      await writeAt(handle, head.stream, 0);
      const tailStart = Math.max(PROBED_END_BYTES, head.size - PROBED_END_BYTES);
      if (tailStart < head.size) {
        const tail = await storage.openStream(key, { start: tailStart, end: head.size - 1 });
        if (tail) await writeAt(handle, tail.stream, tailStart);
      }
    } finally {
      await handle.close();
    }
    const type = await sniffMedia(await firstBytes(file), 'video');
    if (!type) return undefined;
    return (await probeMedia({ path: file, demuxer: type.demuxer })).durationSeconds ?? undefined;
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

async function writeAt(handle: fs.FileHandle, stream: AsyncIterable<Buffer>, position: number): Promise<void> {
  for await (const chunk of stream) {
    await handle.write(chunk, 0, chunk.length, position);
    position += chunk.length;
  }
}

async function firstBytes(file: string): Promise<Buffer> {
  const handle = await fs.open(file, 'r');
  try {
    const head = Buffer.alloc(SNIFF_BYTES);
    const { bytesRead } = await handle.read(head, 0, head.length, 0);
    return head.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}
