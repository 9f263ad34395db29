import { createHash, type Hash, randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { sampleHead } from '../adapters/net/head-sample.ts';
import { readAtMost } from '../adapters/net/read-at-most.ts';
import { ensureStorageRoom } from './storage-usage.ts';
import { z } from 'zod';
import { ACCEPTED_MEDIA, sniffImage, sniffMedia, UPLOAD_MIMES, uploadKindOf } from '../adapters/media/sniff.ts';
import type { S3Storage } from '../adapters/storage/s3.ts';
import { AppError } from '../domain/errors.ts';
import { pageQuery } from '../domain/inputs.ts';
import { uploadIdOf, uploadReference, uploadUses, type UploadKind } from '../domain/uploads.ts';
import { parseInput } from '../domain/validate.ts';
import type { Db } from '../db/pool.ts';
import { deleteExpiredUploads, deleteUploadRow, findUpload, findUploads, insertUpload, listUploads, markUploadReady, type UploadRow } from '../repositories/uploads.ts';
import type { Deps } from './deps.ts';
import type { Principal } from './principal.ts';
import { requireUuid } from './ids.ts';
import { requestHash, runIdempotent, type IdempotencyRequest, type RecordedOutcome } from './idempotency.ts';
import { paginated, type Paginated } from './paginated.ts';
import { MAX_IMAGE_BYTES } from './remote-images.ts';

/** Enough of a file's start for its type to be told from its magic bytes, past an MP3's ID3 tag and its cover art. */
const SNIFF_BYTES = 1024 * 1024;
/** How long a presigned PUT link works. */
const PRESIGN_TTL_SECONDS = 3600;
const EXPIRED_PER_SWEEP = 500;

const MB = 1024 * 1024;
const inMb = (bytes: number) => `${Math.round((bytes / MB) * 10) / 10} MB`;
const WHAT_IS_TAKEN = `an image (PNG, JPEG, WebP, GIF or AVIF), a video (${ACCEPTED_MEDIA.video}) or audio (${ACCEPTED_MEDIA.audio})`;

export interface Upload {
  id: string;
  /** The reference to put in any URL field of a request: `upload:<id>`. */
  url: string;
  content_type: string;
  size: number;
  expires_at: string;
}

export interface PresignedUpload {
  id: string;
  url: string;
  status: 'pending';
  content_type: string;
  size: number;
  expires_at: string;
  upload_url: string;
  upload_method: 'PUT';
  upload_headers: Record<string, string>;
}

export const presignRequest = z.object({
  content_type: z.enum(UPLOAD_MIMES as [string, ...string[]], { message: `must be the MIME type of ${WHAT_IS_TAKEN}` }),
  size: z.number({ error: 'must be the file size in bytes' }).int('must be a whole number of bytes').min(1, 'must be at least 1 byte').max(10_000 * MB, `must be at most ${10_000 * MB} bytes`),
});

export const uploadView = (row: UploadRow): Upload => ({
  id: row.id,
  url: uploadReference(row.id),
  content_type: row.content_type ?? row.declared_content_type ?? 'application/octet-stream',
  size: Number(row.size),
  expires_at: row.expires_at.toISOString(),
});

/** What the bytes are, from their magic bytes alone (never a header or a name). */
async function sniff(bytes: Buffer): Promise<{ mime: string; ext: string; kind: UploadKind } | null> {
  const image = await sniffImage(bytes).catch(() => null);
  if (image) return { ...image, kind: 'image' };
  const video = await sniffMedia(bytes, 'video');
  if (video) return { mime: video.mime, ext: video.ext, kind: 'video' };
  const audio = await sniffMedia(bytes, 'audio');
  if (audio) return { mime: audio.mime, ext: audio.ext, kind: 'audio' };
  return null;
}

async function* hashing(source: AsyncIterable<Buffer>, digest: Hash): AsyncGenerator<Buffer> {
  for await (const chunk of source) {
    digest.update(chunk);
    yield chunk;
  }
}

const kindWords: Record<UploadKind, string> = { image: 'an image', video: 'a video', audio: 'audio' };

/**
 * Files a team uploads to use as inputs. Each is sniffed, held to its kind's size, stored under
 * `uploads/<team>/` and named `upload:<id>` in requests; an unused one is deleted after its time.
 */
export function createUploadService({ db, storage, config, log }: Pick<Deps, 'db' | 'storage' | 'config' | 'log'>) {
  const limitOf = (kind: UploadKind) => (kind === 'image' ? MAX_IMAGE_BYTES : config.maxInputVideoBytes);
  const expiry = () => new Date(Date.now() + config.uploadTtlMs);
  const s3 = (storage as Partial<S3Storage>).kind === 's3' ? (storage as S3Storage) : undefined;

  function checkSize(kind: UploadKind, size: number): void {
    const limit = limitOf(kind);
    if (size > limit) throw new AppError('validation_error', `file: ${kindWords[kind]} upload takes at most ${inMb(limit)}; this one is ${inMb(size)}`);
  }

  async function requireOwn(p: Principal, id: unknown): Promise<UploadRow> {
    const row = await findUpload(db, p.teamId, requireUuid(id));
    if (!row) throw new AppError('not_found', 'Upload not found');
    return row;
  }

  return {
    /** The largest body POST /uploads reads: the largest kind's limit. */
    maxBytes: Math.max(MAX_IMAGE_BYTES, config.maxInputVideoBytes),

    /**
     * Stores one file as its bytes arrive: its type sniffed from the first bytes, its kind's limit
     * counted as the rest goes to storage, never held whole. Answers 201 with its reference; a
     * refusal (type, size, quota, a replayed key) leaves no file and no row.
     */
    async create(p: Principal, body: { stream: Readable; declaredBytes?: number }, idem?: IdempotencyRequest): Promise<RecordedOutcome> {
      const { head, stream } = await sampleHead(body.stream, SNIFF_BYTES);
      try {
        if (head.length === 0) throw new AppError('validation_error', 'file: the upload is empty; send the file as the body or as the one file of a multipart form');
        const type = await sniff(head);
        if (!type) throw new AppError('validation_error', `file: the bytes are not ${WHAT_IS_TAKEN}; the Content-Type sent is not trusted, the bytes are read`);
        if (body.declaredBytes !== undefined) checkSize(type.kind, body.declaredBytes);
        // A team already at its quota is refused before the rest is read; the exact check follows the size.
        await ensureStorageRoom({ db, config }, p.teamId, { upload: head.length });
        const id = randomUUID();
        const key = `uploads/${p.teamId}/${id}.${type.ext}`;
        const digest = createHash('sha256');
        const limit = limitOf(type.kind);
        const { size } = await storage.putStream(key, Readable.from(hashing(stream, digest), { objectMode: false }), {
          contentType: type.mime,
          maxBytes: limit,
          tooLarge: () => new AppError('validation_error', `file: ${kindWords[type.kind]} upload takes at most ${inMb(limit)}; this one is larger`),
        });
        let stored = false;
        try {
          const scope = idem && { teamId: p.teamId, ...idem };
          const outcome = await runIdempotent(db, scope, requestHash({ sha256: digest.digest('hex') }), async (trx) => {
            // Inside: a replay answers what it answered, whatever the team stores now.
            await ensureStorageRoom({ db, config }, p.teamId, { upload: size });
            const row = await insertUpload(trx, { id, team_id: p.teamId, status: 'ready', storage_key: key, content_type: type.mime, kind: type.kind, size, expires_at: expiry() });
            stored = true;
            return { status: 201, body: uploadView(row) };
          });
          return outcome;
        } finally {
          // A replay, a refusal or a failed commit keeps nothing of these bytes.
          if (!stored) await storage.delete(key).catch((err: unknown) => log.warn({ err, file: key }, 'a refused upload could not be deleted'));
        }
      } finally {
        stream.destroy();
      }
    },

    /** S3 storage only: a link the client PUTs the bytes to, then POST /uploads/{id}/complete. */
    async presign(p: Principal, body: unknown, idem?: IdempotencyRequest): Promise<RecordedOutcome> {
      if (!s3) {
        throw new AppError('validation_error', 'presigned uploads need S3 storage, and this server stores files on its disk: send the file itself to POST /uploads (as the body or a multipart form)');
      }
      const input = parseInput(presignRequest, body);
      const kind = uploadKindOf(input.content_type)!;
      checkSize(kind, input.size);
      const scope = idem && { teamId: p.teamId, ...idem };
      return runIdempotent(db, scope, requestHash(body), async (trx) => {
        await ensureStorageRoom({ db, config }, p.teamId, { upload: input.size });
        const id = randomUUID();
        const ext = input.content_type.split('/')[1]!.replace(/[^a-z0-9]/g, '').slice(0, 10) || 'bin';
        const key = `uploads/${p.teamId}/${id}.${ext}`;
        const row = await insertUpload(trx, {
          id,
          team_id: p.teamId,
          status: 'pending',
          storage_key: key,
          size: input.size,
          declared_content_type: input.content_type,
          expires_at: expiry(),
        });
        const uploadUrl = await s3.presignPut(key, { contentType: input.content_type, size: input.size, ttlSeconds: PRESIGN_TTL_SECONDS });
        const answer: PresignedUpload = {
          ...uploadView(row),
          status: 'pending',
          upload_url: uploadUrl,
          upload_method: 'PUT',
          upload_headers: { 'content-type': input.content_type },
        };
        return { status: 201, body: answer };
      });
    },

    /**
     * A presigned upload's bytes checked where they landed: the size declared, a type an input
     * takes (sniffed from the first bytes) within its kind's size. A mismatch deletes the object
     * and the upload. Answers the upload (again, when it was already complete).
     */
    async complete(p: Principal, id: unknown): Promise<Upload> {
      const row = await requireOwn(p, id);
      if (row.status === 'ready') return uploadView(row);
      if (!s3) throw new AppError('validation_error', 'presigned uploads need S3 storage');
      const stored = await s3.head(row.storage_key, SNIFF_BYTES);
      if (!stored) throw new AppError('validation_error', 'file: nothing has been uploaded to the upload_url yet; PUT the file there first');
      const refuse = async (why: string): Promise<never> => {
        await deleteUploadRow(db, row.id);
        await storage.delete(row.storage_key).catch((err: unknown) => log.warn({ err, file: row.storage_key }, 'a refused upload could not be deleted; the expiry job will not find it'));
        throw new AppError('validation_error', `file: ${why}; the upload was deleted, ask for a new one`);
      };
      if (stored.size !== Number(row.size)) return refuse(`${stored.size} bytes were uploaded but ${row.size} were declared`);
      const type = await sniff(stored.first);
      if (!type) return refuse(`the bytes are not ${WHAT_IS_TAKEN}`);
      // The bucket keeps the declared Content-Type: the bytes must be of that kind (an audio MP4 sniffs as a video container).
      const declared = uploadKindOf(row.declared_content_type ?? '');
      if (declared !== type.kind && !(declared === 'audio' && type.kind === 'video')) {
        return refuse(`the bytes are ${kindWords[type.kind]} (${type.mime}) but ${declared ? kindWords[declared] : 'another type'} was declared`);
      }
      if (stored.size > limitOf(type.kind)) return refuse(`${kindWords[type.kind]} upload takes at most ${inMb(limitOf(type.kind))}`);
      const ready = await markUploadReady(db, row.id, { content_type: type.mime, kind: type.kind, size: stored.size });
      return uploadView(ready ?? (await requireOwn(p, row.id)));
    },

    async get(p: Principal, id: unknown): Promise<Upload & { status: 'pending' | 'ready' }> {
      const row = await requireOwn(p, id);
      return { ...uploadView(row), status: row.status };
    },

    async list(p: Principal, query: unknown): Promise<Paginated<Upload>> {
      const page = parseInput(pageQuery, query);
      const { rows, total } = await listUploads(db, p.teamId, page);
      return paginated(rows.map(uploadView), total, page);
    },

    /** Deletes uploads past their time that nothing needs any more, and their files; how many. */
    async deleteExpired(now = new Date()): Promise<number> {
      let total = 0;
      for (;;) {
        const keys = await deleteExpiredUploads(db, now, EXPIRED_PER_SWEEP);
        await Promise.all(keys.map((k) => storage.delete(k).catch((err: unknown) => log.warn({ err, file: k }, 'the file of an expired upload could not be deleted'))));
        total += keys.length;
        if (keys.length < EXPIRED_PER_SWEEP) return total;
      }
    },
  };
}
export type UploadService = ReturnType<typeof createUploadService>;

/**
 * Refuses a checked body whose `upload:<id>` values are not the team's usable uploads of the kind
 * each field takes: before anything is charged or written.
 */
export async function checkUploadUses(db: Db, teamId: string, params: unknown): Promise<void> {
  const uses = uploadUses(params);
  if (!uses.length) return;
  const rows = new Map((await findUploads(db, teamId, [...new Set(uses.map((u) => u.id))])).map((r) => [r.id, r]));
  const now = Date.now();
  for (const use of uses) {
    const row = rows.get(use.id);
    if (!row) throw new AppError('not_found', `${use.field}: upload ${use.id} not found (an upload is usable only by its own team, until it expires)`);
    if (row.status !== 'ready') throw new AppError('validation_error', `${use.field}: upload ${use.id} is not complete yet (POST /uploads/${use.id}/complete after the PUT)`);
    if (row.expires_at.getTime() <= now) throw new AppError('validation_error', `${use.field}: upload ${use.id} expired at ${row.expires_at.toISOString()}; upload the file again`);
    if (!use.kinds.includes(row.kind!)) {
      throw new AppError('validation_error', `${use.field}: upload ${use.id} is ${kindWords[row.kind!]} (${row.content_type}); this field takes ${use.kinds.map((k) => kindWords[k]).join(' or ')}`);
    }
  }
}

/**
 * The stored bytes an `upload:<id>` names for this team (a worker reading an input it was given),
 * when they are at most `maxBytes` (else `tooLarge`, told by the size before any byte is read);
 * null when the value is not an upload reference.
 */
export async function readUpload(
  deps: Pick<Deps, 'db' | 'storage'>,
  teamId: string,
  value: string,
  maxBytes: number,
  tooLarge: () => Error,
): Promise<{ key: string; bytes: Buffer; mime: string } | null> {
  const id = uploadIdOf(value);
  if (!id) return null;
  const key = await uploadKeyOf(deps.db, teamId, value);
  const o = key && (await deps.storage.openStream(key));
  if (!key || !o) throw new AppError('validation_error', `upload ${id} is no longer stored`);
  if (o.size > maxBytes) {
    o.stream.destroy();
    throw tooLarge();
  }
  return { key, bytes: await readAtMost(o.stream, maxBytes, tooLarge), mime: o.contentType };
}

/** The storage key of a team's ready upload named by `upload:<id>`, or null. */
export async function uploadKeyOf(db: Db, teamId: string, value: string): Promise<string | null> {
  const id = uploadIdOf(value);
  if (!id) return null;
  const row = await findUpload(db, teamId, id);
  return row && row.status === 'ready' ? row.storage_key : null;
}

/**
 * The image fetcher of products, avatars and the like, taking `upload:<id>` of the caller's team
 * too: checked as a create checks it, then read from storage instead of the network.
 */
export function withUploadedImages(fetchRemote: Deps['fetchImage'], deps: Pick<Deps, 'db' | 'storage'>): Deps['fetchImage'] {
  return async (url, field, teamId) => {
    if (!uploadIdOf(url)) return fetchRemote(url, field);
    if (!teamId) throw new AppError('validation_error', `${field}: an upload reference is not taken here`);
    await checkUploadUses(deps.db, teamId, { [field]: url });
    const file = await readUpload(deps, teamId, url, MAX_IMAGE_BYTES, () => new AppError('validation_error', `${field}: the upload is larger than an image may be`));
    const type = await sniffImage(file!.bytes);
    if (!type) throw new AppError('validation_error', `${field}: the upload is not an image`);
    return { bytes: file!.bytes, mime: type.mime, ext: type.ext };
  };
}

/**
 * The stored request as a provider gets it: every `upload:<id>` in a URL field replaced by a signed
 * link to the stored file (valid `ttlSeconds`), since a provider fetches inputs by URL.
 */
export async function withUploadLinks(deps: Pick<Deps, 'db' | 'storage'>, teamId: string, params: Record<string, unknown>, ttlSeconds: number): Promise<Record<string, unknown>> {
  const uses = uploadUses(params);
  if (!uses.length) return params;
  const links = new Map<string, string>();
  for (const id of new Set(uses.map((u) => u.id))) {
    const key = await uploadKeyOf(deps.db, teamId, uploadReference(id));
    if (!key) throw new AppError('validation_error', `upload ${id} is no longer stored`);
    links.set(uploadReference(id), await deps.storage.signedUrl(key, ttlSeconds));
  }
  const swap = (v: unknown): unknown => (typeof v === 'string' && links.has(v) ? links.get(v) : Array.isArray(v) ? v.map(swap) : v);
  return Object.fromEntries(Object.entries(params).map(([k, v]) => [k, /_urls?$/.test(k) ? swap(v) : v]));
}
