/** Rows per request: the server's limit for checkCampaignRows and addCampaignRows. */
export const MAX_BATCH_ROWS = 500;
/** JSON bytes of rows per request: well under the server's 1 MiB request body limit. */
export const MAX_BATCH_BYTES = 600 * 1024;

/**
 * Groups a stream of items into batches of at most `maxRows` items and `maxBytes` of their sizes
 * (an item larger than `maxBytes` travels alone). Only one batch is held at a time.
 */
export async function* batches<T>(
  items: AsyncIterable<T>,
  sizeOf: (item: T) => number,
  { maxRows = MAX_BATCH_ROWS, maxBytes = MAX_BATCH_BYTES }: { maxRows?: number; maxBytes?: number } = {},
): AsyncGenerator<T[]> {
  let batch: T[] = [];
  let bytes = 0;
  for await (const item of items) {
    const size = sizeOf(item);
    if (batch.length && (batch.length >= maxRows || bytes + size > maxBytes)) {
      yield batch;
      batch = [];
      bytes = 0;
    }
    batch.push(item);
    bytes += size;
  }
  if (batch.length) yield batch;
}
