import path from 'node:path';
import { z } from 'zod';

/** A binary's location: absolute, so what runs never depends on the working directory or PATH. */
const absolutePath = z.string().refine((p) => path.isAbsolute(p), 'must be an absolute path');

/** FFMPEG_PATH and FFPROBE_PATH: part of the configuration's schema (src/config.ts), and read alone here. */
export const MEDIA_TOOL_VARIABLES = {
  FFMPEG_PATH: absolutePath.optional(),
  FFPROBE_PATH: absolutePath.optional(),
};

export interface MediaToolPaths {
  ffmpeg: string | undefined;
  ffprobe: string | undefined;
}

export function mediaToolPaths(e: { FFMPEG_PATH?: string | undefined; FFPROBE_PATH?: string | undefined }): Readonly<MediaToolPaths> {
  return Object.freeze({ ffmpeg: e.FFMPEG_PATH, ffprobe: e.FFPROBE_PATH });
}

/**
 * FFMPEG_PATH and FFPROBE_PATH alone, for code that runs the media tools without a loaded
 * configuration (admin commands, tests); loadConfig reads them the same way (empty is unset).
 */
export function loadMediaToolPaths(env: NodeJS.ProcessEnv = process.env): Readonly<MediaToolPaths> {
  const parsed = z.object(MEDIA_TOOL_VARIABLES).safeParse({ FFMPEG_PATH: env.FFMPEG_PATH || undefined, FFPROBE_PATH: env.FFPROBE_PATH || undefined });
  if (!parsed.success) {
    throw new Error(`invalid configuration:\n${parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`).join('\n')}`);
  }
  return mediaToolPaths(parsed.data);
}
