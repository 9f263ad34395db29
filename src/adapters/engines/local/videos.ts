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

/** One H.264/AAC MP4 for any video operation, rendered in a temp dir that is always removed. */
export async function renderVideo(job: EngineJob, ctx: RenderContext): Promise<EngineFile> {
  const bytes = await withTempDir(ctx.tmpRoot, async (dir) => {
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
  });
  return { bytes, mime: 'video/mp4', ext: 'mp4' };
}
