import { randomUUID } from 'node:crypto';
import type { Storage } from '../adapters/storage/storage.ts';
import { AppError } from '../domain/errors.ts';
import type { Transaction } from 'kysely';
import type { Database } from '../db/types.ts';
import type { Deps } from './deps.ts';
import type { Principal } from './principal.ts';
import { isForeignKeyViolation } from './ids.ts';
import { requestHash, runIdempotent, type IdempotencyRequest, type Outcome, type RecordedOutcome } from './idempotency.ts';
import type { FetchedImage } from './remote-images.ts';

/**
 * Stores a fetched image under `keyBase` + its sniffed extension, then records it with `insert`.
 * The file has to exist before its row does; if no row comes of it (an error, or an idempotent
 * replay that `keep` turns down), the file goes again.
 */
export async function storeThenInsert<T>(
  storage: Storage,
  keyBase: string,
  image: FetchedImage,
  /** Given the key and the stored size, which the row records (storage usage). */
  insert: (imageKey: string, imageBytes: number) => Promise<T>,
  keep: (result: T) => boolean = () => true,
): Promise<T> {
  const imageKey = `${keyBase}.${image.ext}`;
  await storage.put(imageKey, image.bytes, image.mime);
  let result: T;
  try {
    result = await insert(imageKey, image.bytes.length);
  } catch (e) {
    await storage.delete(imageKey).catch(() => {});
    throw e;
  }
  if (!keep(result)) await storage.delete(imageKey).catch(() => {});
  return result;
}

/**
 * Deletes a row that owns a stored image, then its file. A row still pointed at (a foreign key) is
 * a `conflict` saying `inUse`; no row is `not_found` saying `notFound`. The row goes first: a file
 * that cannot be deleted afterwards is only logged as orphaned (`what` names it in the log).
 */
export async function deleteThenUnstore(
  { storage, log }: Pick<Deps, 'storage' | 'log'>,
  remove: () => Promise<{ image_key: string } | undefined>,
  messages: { inUse: string; notFound: string; what: string },
): Promise<void> {
  let row: { image_key: string } | undefined;
  try {
    row = await remove();
  } catch (e) {
    if (isForeignKeyViolation(e)) throw new AppError('conflict', messages.inUse);
    throw e;
  }
  if (!row) throw new AppError('not_found', messages.notFound);
  const imageKey = row.image_key;
  await storage.delete(imageKey).catch((e: unknown) => log.warn({ err: e, image_key: imageKey }, `orphaned ${messages.what} image`));
}

/**
 * Creates a team's row that owns an image fetched from `imageUrl`: the image is fetched and stored
 * (under `folder/<team>/<new id>`) before the row exists, and `insert` writes the row and gives the
 * answer in the transaction that records it for the idempotency key; a replay keeps no new file.
 */
export async function createWithImage(
  { db, storage, fetchImage }: Pick<Deps, 'db' | 'storage' | 'fetchImage'>,
  p: Principal,
  request: { body: unknown; idem: IdempotencyRequest | undefined; imageUrl: string; folder: string },
  insert: (trx: Transaction<Database>, stored: { id: string; imageKey: string; imageBytes: number }) => Promise<Outcome>,
): Promise<RecordedOutcome> {
  const image = await fetchImage(request.imageUrl, 'image_url', p.teamId);
  const id = randomUUID();
  const scope = request.idem ? { teamId: p.teamId, ...request.idem } : undefined;
  return storeThenInsert(
    storage,
    `${request.folder}/${p.teamId}/${id}`,
    image,
    (imageKey, imageBytes) => runIdempotent(db, scope, requestHash(request.body), (trx) => insert(trx, { id, imageKey, imageBytes })),
    (outcome) => !outcome.replayed,
  );
}
