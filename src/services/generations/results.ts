import type { EngineFile } from '../../adapters/engines/render-job.ts';
import { probeMedia } from '../../adapters/engines/ffmpeg.ts';
import type { Storage } from '../../adapters/storage/storage.ts';
import type { GenerationRow } from '../../db/types.ts';

/**
 * A generation's finished files into storage, under keys of its own, and what only the media can
 * tell (a video's duration): the same for the local engine and every upstream provider.
 */
export async function storeResults(
  storage: Pick<Storage, 'put'>,
  g: Pick<GenerationRow, 'id' | 'team_id'>,
  files: readonly EngineFile[],
): Promise<{ keys: string[]; meta: Record<string, unknown>; bytes: number }> {
  const keys: string[] = [];
  let bytes = 0;
  for (const [i, file] of files.entries()) {
    const key = `generations/${g.team_id}/${g.id}/${i + 1}.${file.ext}`;
    await storage.put(key, file.bytes, file.mime);
    keys.push(key);
    bytes += file.bytes.length;
  }
  const meta: Record<string, unknown> = {};
  const firstVideo = files.find((f) => f.mime.startsWith('video/'));
  if (firstVideo) {
    const info = await probeMedia(firstVideo.bytes, { kind: 'video' }).catch(() => undefined);
    if (info?.durationSeconds) meta.duration = Math.round(info.durationSeconds * 100) / 100;
  }
  return { keys, meta, bytes };
}
