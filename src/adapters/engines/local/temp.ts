import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

export const TEMP_PREFIX = 'adforge-local-';

/** Runs `fn` with a fresh private directory that is removed afterwards, whatever happens. */
export async function withTempDir<T>(root: string | undefined, fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await fs.mkdtemp(path.join(root ?? os.tmpdir(), TEMP_PREFIX));
  try {
    return await fn(dir);
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}
