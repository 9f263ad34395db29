import type { Logger } from 'pino';
import { cannotRun } from '../adapters/executable.ts';
import { mediaTool, mediaToolVersion, useMediaTools, type MediaTool } from '../adapters/engines/ffmpeg.ts';
import { describeBuild, parseToolBuild, type ToolBuild } from '../adapters/engines/ffmpeg-version.ts';
import type { Config } from '../config.ts';

/**
 * Before a process listens, starts its worker or initialises the embedded PostgreSQL: the binaries
 * it will need can run. Every role runs ffmpeg and ffprobe (voiceovers on the API, media on the
 * worker); without DATABASE_URL it also runs the embedded PostgreSQL. A binary that cannot run
 * stops the start with its name and how to repair it, not the first generation that needs it.
 * An ffmpeg or ffprobe older than 5.1 is named in one warning: it reads users' media.
 */
export async function checkBinaries(config: Pick<Config, 'mediaTools' | 'databaseUrl'>, log: Logger): Promise<void> {
  useMediaTools(config.mediaTools);
  const tools = await Promise.all((['ffmpeg', 'ffprobe'] as const).map(checkMediaTool));
  const problems = tools.flatMap((t) => (t.problem ? [t.problem] : []));
  if (!config.databaseUrl) {
    const problem = await embeddedPostgresProblem();
    if (problem) problems.push(problem);
  }
  if (problems.length) throw new Error(problems.join('\n'));

  const outdated = tools.flatMap((t) => (t.build?.outdated ? [{ ...t, build: t.build }] : []));
  if (!outdated.length) return;
  log.warn(
    {
      ...Object.fromEntries(outdated.map((t) => [t.tool, t.path])),
      versions: Object.fromEntries(outdated.map((t) => [t.tool, t.build.version])),
    },
    `this ${outdated.map((t) => `${t.tool} ${describeBuild(t.build)}`).join(' and ')} is older than 5.1 and reads users' media: ` +
      'its demuxers and decoders lack years of security fixes. Point FFMPEG_PATH and FFPROBE_PATH at a maintained build, ' +
      "e.g. the operating system's package (Debian or Ubuntu: apt-get install ffmpeg, then FFMPEG_PATH=/usr/bin/ffmpeg FFPROBE_PATH=/usr/bin/ffprobe)",
  );
}

const SETTING: Record<MediaTool, string> = { ffmpeg: 'FFMPEG_PATH', ffprobe: 'FFPROBE_PATH' };

/** Whether `tool` can be run (as this user, and answering `-version`), and what build it is. */
async function checkMediaTool(tool: MediaTool): Promise<{ tool: MediaTool; path?: string; problem?: string; build?: ToolBuild }> {
  let where;
  try {
    where = mediaTool(tool);
  } catch (e) {
    return { tool, problem: (e as Error).message };
  }
  const label = `${tool} ${where.path} (${where.chosenBy})`;
  const problem = await cannotRun(where.path, label);
  if (problem) return { tool, problem };
  try {
    return { tool, path: where.path, build: parseToolBuild(await mediaToolVersion(tool)) };
  } catch (e) {
    // Executable but broken, e.g. a library it links is missing.
    return { tool, problem: `${label} does not run: ${(e as Error).message}; point ${SETTING[tool]} at a working build` };
  }
}

async function embeddedPostgresProblem(): Promise<string | undefined> {
  const [{ packagedBinaries }, { checkEmbeddedPostgresBinaries }, { postgresUser, runningAsRoot }] = await Promise.all([
    import('../db/postgres-server.ts'),
    import('./embedded-postgres-binaries.ts'),
    import('../db/postgres-user.ts'),
  ]);
  try {
    // As root the cluster runs as the postgres user (PostgreSQL refuses root): it is who must run them.
    await checkEmbeddedPostgresBinaries(await packagedBinaries(), runningAsRoot() ? await postgresUser() : undefined);
    return undefined;
  } catch (e) {
    return (e as Error).message;
  }
}
