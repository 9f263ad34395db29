import { DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, PutObjectCommand, S3Client, type S3ClientConfig } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { Readable } from 'node:stream';
import { byteLimit } from '../net/byte-limit.ts';
import { AppError } from '../../domain/errors.ts';
import { type LinkCheck, verifyLink } from './signing.ts';
import { assertValidKey, isValidKey, resolveLinkTtl, type Storage, storageTooLarge, type StoredObject } from './storage.ts';

export interface S3StorageOptions {
  bucket: string;
  region: string;
  /** For R2, MinIO and friends; omit for AWS. */
  endpoint?: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** MinIO and most self-hosted servers need `bucket` in the path rather than the host name. */
  forcePathStyle?: boolean;
  /** Host that browsers reach when it differs from the one the server talks to (e.g. `minio:9000` inside compose). */
  publicEndpoint?: string;
  /** The secret /files links were signed with while the files were on disk: those links still verify. */
  linkSecret?: string;
}

export interface S3Storage extends Storage {
  readonly kind: 's3';
  /** A link a client PUTs exactly `size` bytes of `contentType` to, until it expires. */
  presignPut(key: string, opts: { contentType: string; size: number; ttlSeconds: number }): Promise<string>;
  /** The object's size and its first `bytes` bytes; null when the key holds nothing. */
  head(key: string, bytes: number): Promise<{ size: number; first: Buffer } | null>;
  /** Checks a /files link (signed while the files were on disk); without linkSecret every link is refused. */
  verifyLink(key: string, expires: string, signature: string, now?: number): LinkCheck;
}

const FALLBACK_CONTENT_TYPE = 'application/octet-stream';
// Parts of S3's floor (5 MB), two in flight while the next fills: a stream of any length costs
// about 15 MB, and a worker copying four results at once about 60 MB. 10,000 parts hold 48 GB.
const PART_BYTES = 5 * 1024 * 1024;
const PARTS_IN_FLIGHT = 2;

function clientConfig(options: S3StorageOptions, endpoint: string | undefined): S3ClientConfig {
  return {
    region: options.region,
    ...(endpoint ? { endpoint } : {}),
    forcePathStyle: options.forcePathStyle ?? false,
    credentials: { accessKeyId: options.accessKeyId, secretAccessKey: options.secretAccessKey },
    // Newer SDKs add CRC checksums to every request by default, which several S3-compatible servers reject.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  };
}

const isNotFound = (e: unknown): boolean => {
  if (typeof e !== 'object' || e === null) return false;
  const named = 'name' in e && (e.name === 'NoSuchKey' || e.name === 'NotFound');
  const meta = '$metadata' in e ? (e.$metadata as { httpStatusCode?: number } | undefined) : undefined;
  return named || meta?.httpStatusCode === 404;
};

function storageFailure(operation: string, e: unknown): AppError {
  const name = e instanceof Error ? e.name : 'unknown error';
  const failure = new AppError('external_service_error', `object storage ${operation} failed (${name})`);
  failure.cause = e;
  return failure;
}

export function createS3Storage(options: S3StorageOptions): S3Storage {
  const client = new S3Client(clientConfig(options, options.endpoint));
  // Presigning is local computation, so a second client just to sign for the public host costs nothing.
  const presignClient = options.publicEndpoint
    ? new S3Client(clientConfig(options, options.publicEndpoint))
    : client;
  const Bucket = options.bucket;

  return {
    kind: 's3',

    async put(key, bytes, contentType) {
      assertValidKey(key);
      try {
        await client.send(new PutObjectCommand({ Bucket, Key: key, Body: bytes, ContentType: contentType }));
      } catch (e) {
        throw storageFailure('put', e);
      }
    },

    async get(key): Promise<StoredObject | null> {
      assertValidKey(key);
      try {
        const response = await client.send(new GetObjectCommand({ Bucket, Key: key }));
        if (!response.Body) return null;
        const bytes = Buffer.from(await response.Body.transformToByteArray());
        return { bytes, contentType: response.ContentType ?? FALLBACK_CONTENT_TYPE };
      } catch (e) {
        if (isNotFound(e)) return null;
        throw storageFailure('get', e);
      }
    },

    async delete(key) {
      assertValidKey(key);
      try {
        await client.send(new DeleteObjectCommand({ Bucket, Key: key }));
      } catch (e) {
        if (isNotFound(e)) return;
        throw storageFailure('delete', e);
      }
    },

    async presignPut(key, { contentType, size, ttlSeconds }) {
      assertValidKey(key);
      const expiresIn = resolveLinkTtl(ttlSeconds);
      // Content-Type and Content-Length are signed: the bucket refuses a PUT that differs from either.
      return getSignedUrl(presignClient, new PutObjectCommand({ Bucket, Key: key, ContentType: contentType, ContentLength: size }), {
        expiresIn,
        signableHeaders: new Set(['content-type', 'content-length']),
      });
    },

    async head(key, bytes) {
      assertValidKey(key);
      try {
        const meta = await client.send(new HeadObjectCommand({ Bucket, Key: key }));
        const size = Number(meta.ContentLength ?? 0);
        if (size === 0) return { size, first: Buffer.alloc(0) };
        const part = await client.send(new GetObjectCommand({ Bucket, Key: key, Range: `bytes=0-${Math.min(bytes, size) - 1}` }));
        const first = part.Body ? Buffer.from(await part.Body.transformToByteArray()) : Buffer.alloc(0);
        return { size, first };
      } catch (e) {
        if (isNotFound(e)) return null;
        throw storageFailure('head', e);
      }
    },

    async signedUrl(key, ttlSeconds) {
      assertValidKey(key);
      const expiresIn = resolveLinkTtl(ttlSeconds);
      return getSignedUrl(presignClient, new GetObjectCommand({ Bucket, Key: key }), { expiresIn });
    },

    verifyLink(key, expires, signature, now) {
      if (!options.linkSecret || !isValidKey(key)) return { ok: false, reason: 'invalid_signature' };
      return verifyLink({ key, expires, signature }, options.linkSecret, now);
    },

    async openStream(key, range) {
      assertValidKey(key);
      try {
        const response = await client.send(new GetObjectCommand({ Bucket, Key: key, ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}) }));
        if (!response.Body) return null;
        // A ranged answer's ContentLength is the range's; the object's size is after the slash of Content-Range.
        const whole = range && response.ContentRange ? Number(response.ContentRange.split('/')[1]) : Number(response.ContentLength ?? 0);
        return { stream: response.Body as Readable, size: whole, contentType: response.ContentType ?? FALLBACK_CONTENT_TYPE };
      } catch (e) {
        if (isNotFound(e)) return null;
        throw storageFailure('get', e);
      }
    },

    async putStream(key, stream, opts) {
      assertValidKey(key);
      const limit = byteLimit(opts.maxBytes, opts.tooLarge ?? storageTooLarge(opts.maxBytes));
      // A failed source or a broken limit aborts the multipart upload, so no part is left billed in the bucket.
      stream.on('error', (e) => limit.destroy(e));
      stream.pipe(limit);
      const upload = new Upload({
        client,
        params: { Bucket, Key: key, Body: limit, ContentType: opts.contentType },
        partSize: PART_BYTES,
        queueSize: PARTS_IN_FLIGHT,
        leavePartsOnError: false,
      });
      const failed = new Promise<never>((_, reject) => limit.once('error', reject));
      failed.catch(() => {});
      try {
        await Promise.race([upload.done(), failed]);
      } catch (e) {
        await upload.abort().catch(() => {});
        if (limit.errored && !(e as { $metadata?: unknown }).$metadata) throw limit.errored;
        throw storageFailure('put', e);
      }
      if (opts.size !== undefined && limit.size() !== opts.size) {
        await client.send(new DeleteObjectCommand({ Bucket, Key: key })).catch(() => {});
        throw new AppError('validation_error', `stored ${limit.size()} bytes where ${opts.size} were announced`);
      }
      return { size: limit.size() };
    },
  };
}
