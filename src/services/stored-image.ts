import type { Storage } from '../adapters/storage/storage.ts';
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
