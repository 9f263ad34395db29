import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import type { EngineFile } from '../../adapters/engines/render-job.ts';
import { probeMedia } from '../../adapters/engines/ffmpeg.ts';
import { sniffMedia } from '../../adapters/media/sniff.ts';
import type { Storage } from '../../adapters/storage/storage.ts';
import type { GenerationRow } from '../../db/types.ts';
import { storeSniffed, type SniffedType } from '../stored-media.ts';

type Stored = { keys: string[]; meta: Record<string, unknown>; bytes: number };

const resultKey = (g: Pick<GenerationRow, 'id' | 'team_id'>, index: number, ext: string) => `generations/${g.team_id}/${g.id}/${index + 1}.${ext}`;

/**
 * A generation's finished files into storage, under keys of its own, and what only the media can
 * tell (a video's duration): the same for the local engine and every upstream provider.
 */
export async function storeResults(
  storage: Pick<Storage, 'put'>,
  g: Pick<GenerationRow, 'id' | 'team_id'>,
  files: readonly EngineFile[],
): Promise<Stored> {
  const keys: string[] = [];
  let bytes = 0;
  for (const [i, file] of files.entries()) {
    const key = resultKey(g, i, file.ext);
    await storage.put(key, file.bytes, file.mime);
    keys.push(key);
    bytes += file.bytes.length;
  }
  const meta: Record<string, unknown> = {};
  const firstVideo = files.find((f) => f.mime.startsWith('video/'));
  if (firstVideo) {
    const info = await probeMedia(firstVideo.bytes, { kind: 'video' }).catch(() => undefined);
    if (info?.durationSeconds) meta.duration = Math.round(info.durationSeconds * 100) / 100;
  }
  return { keys, meta, bytes };
}

export interface ResultStreamOptions {
  /** Counted as each result arrives: past it nothing of that file is stored and `tooLarge()` is thrown. */
  maxBytes: number;
  tooLarge: () => Error;
  /** Why a result of this sniffed type is not taken (not media of the generation's kind), as the error to throw. */
  refuse: (type: SniffedType | undefined) => Error | undefined;
}

/**
 * Provider results streamed into storage one after the other, none held in memory: each is opened
 * only when the one before it is stored, its type read from its first bytes. A result that fails
 * half-way leaves nothing under its key (the storage backend writes whole or not at all).
 */
export async function storeResultStreams(
  storage: Pick<Storage, 'putStream' | 'openStream'>,
  g: Pick<GenerationRow, 'id' | 'team_id'>,
  opens: ReadonlyArray<() => Promise<Readable>>,
  o: ResultStreamOptions,
): Promise<Stored> {
  const keys: string[] = [];
  let bytes = 0;
  let firstVideo: string | undefined;
  for (const [i, open] of opens.entries()) {
    const stored = await storeSniffed(storage, await open(), { keyFor: (t) => resultKey(g, i, t.ext), refuse: o.refuse, maxBytes: o.maxBytes, tooLarge: o.tooLarge });
    keys.push(stored.key);
    bytes += stored.size;
    if (!firstVideo && stored.mime.startsWith('video/')) firstVideo = stored.key;
  }
  const meta: Record<string, unknown> = {};
  if (firstVideo) {
    const seconds = await storedVideoDuration(storage, firstVideo).catch(() => undefined);
    if (seconds) meta.duration = Math.round(seconds * 100) / 100;
  }
  return { keys, meta, bytes };
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
    const head = Buffer.alloc(4100);
    const { bytesRead } = await handle.read(head, 0, head.length, 0);
    return head.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}
