import type { Readable } from 'node:stream';
import { AppError } from '../../domain/errors.ts';

export interface StoredObject {
  bytes: Buffer;
  contentType: string;
}

export interface StoredObjectStream {
  stream: Readable;
  /** The whole object's size, also when the stream reads a range of it. */
  size: number;
  contentType: string;
}

/** Bytes `start` to `end`, both included, as in an HTTP Range. */
export interface ByteRange {
  start: number;
  end: number;
}

export interface PutStreamOptions {
  contentType: string;
  /** Counted as the bytes arrive: past it the write fails with `tooLarge()` and nothing is stored. */
  maxBytes: number;
  /** The exact length when the caller knows it: another length fails and nothing is stored. */
  size?: number;
  tooLarge?: () => Error;
}

/**
 * Where generated and uploaded media live; keys look like `products/<uuid>.png`. Media (videos,
 * audio, results, uploads) go through putStream/openStream and are never held whole in memory;
 * put/get are for small objects (images we decode, sidecars).
 */
export interface Storage {
  put(key: string, bytes: Buffer, contentType: string): Promise<void>;
  /** null when the key holds nothing. Whole in memory: small objects only. */
  get(key: string): Promise<StoredObject | null>;
  /** Deleting a missing key is not an error. */
  delete(key: string): Promise<void>;
  /** A link anyone can GET until it expires; ttl defaults to an hour. */
  signedUrl(key: string, ttlSeconds?: number): Promise<string>;
  /** The object (or `range` of it) as a stream with the object's size; null when missing. */
  openStream(key: string, range?: ByteRange): Promise<StoredObjectStream | null>;
  /**
   * Stores what `stream` yields without holding it in memory (local disk: a temporary file renamed
   * into place; S3: a multipart upload). Nothing is stored when the stream fails or breaks a limit.
   */
  putStream(key: string, stream: Readable, opts: PutStreamOptions): Promise<{ size: number }>;
}

export const storageTooLarge = (maxBytes: number) => (): AppError =>
  new AppError('validation_error', `the file is larger than ${maxBytes} bytes`);

export const DEFAULT_LINK_TTL_SECONDS = 3600;
// S3 refuses presigned links longer than a week; local links follow the same cap so both backends agree.
export const MAX_LINK_TTL_SECONDS = 7 * 24 * 3600;

const MAX_KEY_LENGTH = 1024;
const KEY_CHARS = /^[A-Za-z0-9._/-]+$/;

/**
 * Segments starting with '.' are refused: that excludes '.' and '..', and reserves dot-names
 * for the local backend's temp files and content-type sidecars.
 */
export function isValidKey(key: string): boolean {
  if (key.length === 0 || key.length > MAX_KEY_LENGTH || !KEY_CHARS.test(key)) return false;
  if (key.includes('..')) return false;
  return key.split('/').every((segment) => segment.length > 0 && !segment.startsWith('.'));
}

export function assertValidKey(key: string): void {
  if (!isValidKey(key)) {
    throw new AppError('validation_error', `invalid storage key: ${JSON.stringify(key.slice(0, 100))}`);
  }
}

export function resolveLinkTtl(ttlSeconds: number = DEFAULT_LINK_TTL_SECONDS): number {
  if (!Number.isInteger(ttlSeconds) || ttlSeconds < 1 || ttlSeconds > MAX_LINK_TTL_SECONDS) {
    throw new AppError('validation_error', `link ttl must be a whole number of seconds between 1 and ${MAX_LINK_TTL_SECONDS}`);
  }
  return ttlSeconds;
}
