import type { Logger } from 'pino';
import { cannotRun } from '../adapters/executable.ts';
import { mediaTool, mediaToolVersion, useMediaTools, type MediaTool } from '../adapters/engines/ffmpeg.ts';
import { describeBuild, parseToolBuild } from '../adapters/engines/ffmpeg-version.ts';
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
  const problems: string[] = [];
  const tools: MediaTool[] = ['ffmpeg', 'ffprobe'];
  const runnable: MediaTool[] = [];
  for (const tool of tools) {
    let where;
    try {
      where = mediaTool(tool);
    } catch (e) {
      problems.push((e as Error).message);
      continue;
    }
    const problem = await cannotRun(where.path, `${tool} ${where.path} (${where.chosenBy})`, undefined);
    if (problem) problems.push(problem);
    else runnable.push(tool);
  }
  const builds = await Promise.all(
    runnable.map(async (tool) => {
      try {
        return { tool, build: parseToolBuild(await mediaToolVersion(tool)) };
      } catch (e) {
        const where = mediaTool(tool);
        problems.push(`${tool} ${where.path} (${where.chosenBy}) does not run: ${(e as Error).message}; point ${tool === 'ffmpeg' ? 'FFMPEG_PATH' : 'FFPROBE_PATH'} at a working build`);
        return undefined;
      }
    }),
  );
  if (!config.databaseUrl) {
    const [{ packagedBinaries }, { checkEmbeddedPostgresBinaries }, { postgresUser, runningAsRoot }] = await Promise.all([
      import('../db/postgres-server.ts'),
      import('./embedded-postgres-binaries.ts'),
      import('../db/postgres-user.ts'),
    ]);
    try {
      // As root the cluster runs as the postgres user (PostgreSQL refuses root): it is who must run them.
      await checkEmbeddedPostgresBinaries(await packagedBinaries(), runningAsRoot() ? await postgresUser() : undefined);
    } catch (e) {
      problems.push((e as Error).message);
    }
  }
  if (problems.length) throw new Error(problems.join('\n'));

  const outdated = builds.filter((b) => b?.build?.outdated);
  if (!outdated.length) return;
  const named = outdated.map((b) => `${b!.tool} ${describeBuild(b!.build!)}`).join(' and ');
  const fields = Object.fromEntries(outdated.map((b) => [b!.tool, mediaTool(b!.tool).path]));
  log.warn(
    { ...fields, versions: Object.fromEntries(outdated.map((b) => [b!.tool, b!.build!.version])) },
    `this ${named} is older than 5.1 and reads users' media: its demuxers and decoders lack years of security fixes. ` +
      'Point FFMPEG_PATH and FFPROBE_PATH at a maintained build, e.g. the operating system\'s package ' +
      '(Debian or Ubuntu: apt-get install ffmpeg, then FFMPEG_PATH=/usr/bin/ffmpeg FFPROBE_PATH=/usr/bin/ffprobe)',
  );
}
