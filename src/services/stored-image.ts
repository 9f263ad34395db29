import type { Storage } from '../adapters/storage/storage.ts';
import { AppError } from '../domain/errors.ts';
import type { Deps } from './context.ts';
import { isForeignKeyViolation } from './ids.ts';
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
