import fs from 'node:fs/promises';
import type { EngineFile, EngineResult } from '../../src/adapters/engines/render-job.ts';

/** The local engine's files read back, and its temp dir removed (as the core does once it stored them). */
export async function rendered(run: EngineResult | Promise<EngineResult>): Promise<{ files: Array<EngineFile & { bytes: Buffer }> }> {
  const result = await run;
  try {
    return { files: await Promise.all(result.files.map(async (f) => ({ ...f, bytes: await fs.readFile(f.path) }))) };
  } finally {
    await fs.rm(result.dir, { recursive: true, force: true });
  }
}
