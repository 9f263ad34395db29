import fs from 'node:fs/promises';
import path from 'node:path';
import { EngineError, type EngineFile, type EngineJob } from '../render-job.ts';
import { renderAiVideo } from './ai-video.ts';
import type { RenderContext } from './render-context.ts';
import { evenSize } from './encode.ts';
import { renderLocalize } from './localize.ts';
import { renderSwapAvatar } from './swap-avatar.ts';
import { renderTalkingAvatar } from './talking-avatar.ts';
import { withTempDir } from './temp.ts';
import { renderVideoEdit } from './video-edit.ts';

/** Used when an ai-video job comes without a length (the API always sends one). */
const DEFAULT_SECONDS = 5;

/**
 * One H.264/AAC MP4 for any video operation, left in `outDir` as `video.mp4`. It is rendered in a
 * scratch dir inside `outDir` (the input's copy, pictures, caption lists), removed as soon as the
 * MP4 is out of it.
 */
export async function renderVideo(job: EngineJob, outDir: string, ctx: RenderContext): Promise<EngineFile> {
  const out = path.join(outDir, 'video.mp4');
  await withTempDir(outDir, async (dir) => {
    const rendered = await renderIn(dir);
    await fs.rename(rendered, out);
  });
  return { path: out, mime: 'video/mp4', ext: 'mp4' };

  function renderIn(dir: string): Promise<string> {
    switch (job.operation) {
      case 'ai-video': {
        const frame = { width: evenSize(job.width), height: evenSize(job.height), duration: job.durationSeconds ?? DEFAULT_SECONDS };
        return renderAiVideo(job, dir, frame, ctx);
      }
      case 'talking-avatar':
        return renderTalkingAvatar(job, dir, ctx);
      case 'swap-avatar':
        return renderSwapAvatar(job, dir, ctx);
      case 'localize':
        return renderLocalize(job, dir, ctx);
      case 'video-edit':
        return renderVideoEdit(job, dir, ctx);
      default:
        throw new EngineError(`the local engine cannot make a video for ${job.operation}`, { transient: false });
    }
  }
}
