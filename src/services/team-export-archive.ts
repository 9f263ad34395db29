import { createWriteStream } from 'node:fs';
import { mkdtemp, open, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { pack as tarPack, type Pack } from 'tar-stream';
import type { Storage } from '../adapters/storage/storage.ts';

/**
 * A gzipped tar written as it goes: each entry is added whole before the next (tar needs an entry's
 * size before its bytes), a stored file streamed from storage, a long listing spooled to a
 * temporary file first. Nothing but the entry being written is held in memory.
 */
export interface ArchiveWriter {
  addText(name: string, text: string | Buffer): Promise<void>;
  /** A stored object under `name`; false (nothing added) when storage holds nothing under the key. */
  addStored(name: string, key: string): Promise<boolean>;
  /** An entry whose text is written piece by piece: spooled to a temporary file, then added. */
  addSpooled(name: string, write: (push: (text: string) => Promise<void>) => Promise<void>): Promise<void>;
  /** Ends the archive and waits until every byte reached the output. */
  finish(): Promise<void>;
  /** Stops on a failure: the output is left incomplete. */
  abort(err: Error): Promise<void>;
}

const MTIME = () => new Date();

export async function openArchive(out: Writable, storage: Storage): Promise<ArchiveWriter> {
  const tar: Pack = tarPack();
  const done = pipeline(tar as unknown as Readable, createGzip(), out);
  // Seen by finish() or abort(); a failure before then must not be an unhandled rejection.
  done.catch(() => {});
  const spoolDir = await mkdtemp(path.join(os.tmpdir(), 'adforge-export-'));
  let spooled = 0;

  const entryDone = (name: string, size: number) => {
    let settle!: (err?: Error | null) => void;
    const finished = new Promise<void>((resolve, reject) => {
      settle = (err) => (err ? reject(err) : resolve());
    });
    const sink = tar.entry({ name, size, mtime: MTIME(), mode: 0o644 }, settle);
    return { sink, finished };
  };

  async function addStream(name: string, stream: Readable, size: number): Promise<void> {
    const { sink, finished } = entryDone(name, size);
    for await (const chunk of stream) {
      if (!sink.write(chunk as Buffer)) await new Promise<void>((resolve) => sink.once('drain', () => resolve()));
    }
    sink.end(undefined);
    await finished;
  }

  const writer: ArchiveWriter = {
    async addText(name, text) {
      const bytes = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
      await new Promise<void>((resolve, reject) => tar.entry({ name, size: bytes.length, mtime: MTIME(), mode: 0o644 }, bytes, (err) => (err ? reject(err) : resolve())));
    },

    async addStored(name, key) {
      const object = await storage.openStream(key);
      if (!object) return false;
      await addStream(name, object.stream, object.size);
      return true;
    },

    async addSpooled(name, write) {
      const file = path.join(spoolDir, `${spooled++}.part`);
      const out = createWriteStream(file);
      try {
        await write(async (text) => {
          if (!out.write(text)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
        });
        await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
        const handle = await open(file, 'r');
        try {
          const { size } = await handle.stat();
          await addStream(name, handle.createReadStream({ autoClose: false }), size);
        } finally {
          await handle.close();
        }
      } finally {
        out.destroy();
        await rm(file, { force: true });
      }
    },

    async finish() {
      tar.finalize();
      try {
        await done;
      } finally {
        await rm(spoolDir, { recursive: true, force: true });
      }
    },

    async abort(err) {
      tar.destroy(err);
      await done.catch(() => {});
      await rm(spoolDir, { recursive: true, force: true });
    },
  };
  return writer;
}
