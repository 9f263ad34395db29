import type { Storage } from '../storage/storage.ts';
import type { FetchedImage } from './remote-images.ts';

/**
 * Stores a fetched image under `keyBase` + its sniffed extension, then records it with `insert`.
 * The file has to exist before its row does; if the row cannot be written, the file goes again.
 */
export async function storeThenInsert<T>(
  storage: Storage,
  keyBase: string,
  image: FetchedImage,
  insert: (imageKey: string) => Promise<T>,
): Promise<T> {
  const imageKey = `${keyBase}.${image.ext}`;
  await storage.put(imageKey, image.bytes, image.mime);
  try {
    return await insert(imageKey);
  } catch (e) {
    await storage.delete(imageKey).catch(() => {});
    throw e;
  }
}
