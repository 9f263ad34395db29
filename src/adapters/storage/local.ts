import { randomUUID } from 'node:crypto';
import { createWriteStream, type ReadStream } from 'node:fs';
import { type FileHandle, mkdir, open, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { byteLimit } from '../net/byte-limit.ts';
import { AppError } from '../../domain/errors.ts';
import { type LinkCheck, nowInSeconds, signLink, verifyLink } from './signing.ts';
import { assertValidKey, type ByteRange, isValidKey, type PutStreamOptions, resolveLinkTtl, type Storage, storageTooLarge, type StoredObject } from './storage.ts';

export interface LocalStorageOptions {
  /** Usually `${DATA_DIR}/files`. */
  root: string;
  /** Origin the signed links point at, e.g. `https://ads.example.com`. */
  publicBaseUrl: string;
  signingSecret: string;
}

export interface LocalObjectStream {
  stream: ReadStream;
  size: number;
  contentType: string;
  /** When the file was written: with its size, a validator for conditional range requests. */
  modifiedMs: number;
}

export interface LocalStorage extends Storage {
  readonly kind: 'local';
  /** Checks a link's signature and expiry without touching the disk. */
  verifyLink(key: string, expires: string, signature: string, now?: number): LinkCheck;
  /** For serving large files without buffering them; null when missing. */
  openStream(key: string, range?: ByteRange): Promise<LocalObjectStream | null>;
  /**
   * Where a key's file lies (checked like every key: inside the root), for a tool that reads files
   * (ffprobe measuring a stored result) without a copy. A file replaced meanwhile is renamed over:
   * a reader keeps the version it opened.
   */
  pathOf(key: string): string;
}

interface ContentTypeSidecar {
  contentType: string;
}

const FALLBACK_CONTENT_TYPE = 'application/octet-stream';
// Temp files live inside the root so rename() stays on one filesystem and is atomic.
const TEMP_DIR_NAME = '.tmp';
// How much a stored stream may have waiting for the disk before its source is paused.
const WRITE_BUFFER_BYTES = 1024 * 1024;

// A directory where a key's file would be (key `a` while `a/b` exists) also means "no object here".
const NO_OBJECT_CODES = new Set(['ENOENT', 'ENOTDIR', 'EISDIR', 'ERR_FS_EISDIR']);
const isMissingFile = (e: unknown): boolean =>
  typeof e === 'object' && e !== null && 'code' in e && NO_OBJECT_CODES.has(String(e.code));

/**
 * The content type goes into a sidecar rather than being guessed from the extension because the
 * caller knows the real type (sniffed from the bytes), keys need not carry an extension, and S3
 * stores it per object too, so both backends hand back the same thing. The sidecar is a dot-file
 * beside the data file; keys cannot have dot-segments, so it can never collide with a key.
 */
export function createLocalStorage(options: LocalStorageOptions): LocalStorage {
  const root = path.resolve(options.root);
  const tempDir = path.join(root, TEMP_DIR_NAME);
  const baseUrl = options.publicBaseUrl.replace(/\/+$/, '');
  const secret = options.signingSecret;
  if (secret.length === 0) throw new AppError('validation_error', 'local storage needs a non-empty signing secret');

  const dataPath = (key: string): string => {
    assertValidKey(key);
    const resolved = path.resolve(root, key);
    // Key validation already forbids this; the check keeps a future validation slip from escaping the root.
    if (!resolved.startsWith(root + path.sep)) throw new AppError('validation_error', 'storage key escapes the root');
    return resolved;
  };
  const sidecarPath = (file: string): string => path.join(path.dirname(file), `.${path.basename(file)}.meta.json`);

  /** Writes a temp file and renames it into place: nothing lands unless every byte was written and synced. */
  async function writeAtomically(target: string, write: (temp: string) => Promise<void>): Promise<void> {
    await mkdir(tempDir, { recursive: true });
    const temp = path.join(tempDir, `${randomUUID()}.tmp`);
    try {
      await write(temp);
      await mkdir(path.dirname(target), { recursive: true });
      await rename(temp, target);
    } catch (e) {
      await rm(temp, { force: true });
      throw e;
    }
  }

  // `flush` syncs the file before it is closed, so the rename never lands bytes still in flight.
  const writeWhole = (target: string, content: Buffer | string) => writeAtomically(target, (temp) => writeFile(temp, content, { flag: 'wx', flush: true }));

  /** Streams into the temp file through the byte limit; with `size`, content of another length never lands. */
  async function writeStream(target: string, stream: Readable, opts: PutStreamOptions): Promise<number> {
    const limit = byteLimit(opts.maxBytes, opts.tooLarge ?? storageTooLarge(opts.maxBytes));
    await writeAtomically(target, async (temp) => {
      // A write stream with a large buffer hands the chunks that pile up during one write to the
      // next as one writev: awaiting each network-sized chunk's write alone paced the copy by the
      // disk's latency per chunk, several times slower than the disk.
      await pipeline(stream, limit, createWriteStream(temp, { flags: 'wx', flush: true, highWaterMark: WRITE_BUFFER_BYTES }));
      if (opts.size !== undefined && limit.size() !== opts.size) {
        throw new AppError('validation_error', `stored ${limit.size()} bytes where ${opts.size} were announced`);
      }
    });
    return limit.size();
  }

  async function readContentType(file: string): Promise<string> {
    try {
      const sidecar = JSON.parse(await readFile(sidecarPath(file), 'utf8')) as Partial<ContentTypeSidecar>;
      return typeof sidecar.contentType === 'string' ? sidecar.contentType : FALLBACK_CONTENT_TYPE;
    } catch (e) {
      if (isMissingFile(e) || e instanceof SyntaxError) return FALLBACK_CONTENT_TYPE;
      throw e;
    }
  }

  return {
    kind: 'local',
    pathOf: dataPath,

    async put(key, bytes, contentType) {
      const file = dataPath(key);
      const sidecar: ContentTypeSidecar = { contentType };
      // Sidecar first: until the data file lands a reader sees "missing", never bytes without their type.
      await writeWhole(sidecarPath(file), JSON.stringify(sidecar));
      await writeWhole(file, bytes);
    },

    async putStream(key, stream, opts) {
      const file = dataPath(key);
      const sidecar = sidecarPath(file);
      await writeWhole(sidecar, JSON.stringify({ contentType: opts.contentType } satisfies ContentTypeSidecar));
      try {
        return { size: await writeStream(file, stream, opts) };
      } catch (e) {
        // A refused stream leaves nothing, its sidecar included, unless an earlier object still holds the key.
        if (!(await stat(file).catch(() => null))) await rm(sidecar, { force: true });
        throw e;
      }
    },

    async get(key): Promise<StoredObject | null> {
      const file = dataPath(key);
      let bytes: Buffer;
      try {
        bytes = await readFile(file);
      } catch (e) {
        if (isMissingFile(e)) return null;
        throw e;
      }
      return { bytes, contentType: await readContentType(file) };
    },

    async delete(key) {
      const file = dataPath(key);
      // Data first, so the object vanishes in one step even if removing the sidecar fails.
      for (const target of [file, sidecarPath(file)]) {
        try {
          await rm(target, { force: true });
        } catch (e) {
          if (!isMissingFile(e)) throw e;
        }
      }
    },

    async signedUrl(key, ttlSeconds) {
      assertValidKey(key);
      const expires = nowInSeconds() + resolveLinkTtl(ttlSeconds);
      const signature = signLink(key, expires, secret);
      return `${baseUrl}/files/${key}?expires=${expires}&signature=${signature}`;
    },

    verifyLink(key, expires, signature, now) {
      if (!isValidKey(key)) return { ok: false, reason: 'invalid_signature' };
      return verifyLink({ key, expires, signature }, secret, now);
    },

    async openStream(key, range) {
      const file = dataPath(key);
      let handle: FileHandle;
      try {
        handle = await open(file, 'r');
      } catch (e) {
        if (isMissingFile(e)) return null;
        throw e;
      }
      try {
        // Size and stream come from the same open handle, so a concurrent replace cannot mix two versions.
        const stats = await handle.stat();
        if (!stats.isFile()) {
          await handle.close();
          return null;
        }
        const contentType = await readContentType(file);
        const stream = range ? handle.createReadStream({ start: range.start, end: range.end }) : handle.createReadStream();
        return { stream, size: stats.size, contentType, modifiedMs: stats.mtimeMs };
      } catch (e) {
        await handle.close();
        throw e;
      }
    },
  };
}
