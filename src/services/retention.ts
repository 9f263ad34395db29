import { z } from 'zod';
import { AppError } from '../domain/errors.ts';
import { parseInput } from '../domain/validate.ts';
import { queueJob } from '../jobs/define.ts';
import { deleteStoredFilesJob, MAX_KEYS_PER_JOB } from '../jobs/delete-stored-files.ts';
import { findTeam, lockTeam } from '../repositories/teams.ts';
import { expireAdMedia, expireBrandPictures, expireGenerationFiles, filesExpiredAt, setTeamRetention, teamsWithRetention } from '../repositories/retention.ts';
import { recordAudit, type AuditActor } from './audit.ts';
import type { Deps } from './deps.ts';
import type { GenerationDeleter } from './generations/delete.ts';
import { inputCopyKeys } from './generations/input-keys.ts';
import { requireUuid } from './ids.ts';

const DAY_MS = 86_400_000;
export const MAX_RETENTION_DAYS = 36_500;
/** Generations (or scraped ads) expired per transaction. */
export const RETENTION_BATCH = 500;
/** A run stops after this many; the next day's run goes on where it stopped. */
const MAX_PER_RUN = 100_000;
/** The files job runs this long after the commit: the run deletes the files at once, unless something failed. */
const FILES_JOB_DELAY_MS = 5 * 60_000;

const days = z
  .number({ message: `must be a whole number of days from 1 to ${MAX_RETENTION_DAYS}, or null` })
  .int(`must be a whole number of days from 1 to ${MAX_RETENTION_DAYS}, or null`)
  .min(1, `must be a whole number of days from 1 to ${MAX_RETENTION_DAYS}, or null`)
  .max(MAX_RETENTION_DAYS, `must be a whole number of days from 1 to ${MAX_RETENTION_DAYS}, or null`)
  .nullable();
export const teamRetentionInput = z.object({ days });

/** How long a team's generated files are kept. */
export interface TeamRetention {
  /** What the job applies: the team's own when set, else the server's; null = kept forever. */
  days: number | null;
  /** The team's own setting (null: the server's). */
  team_days: number | null;
  /** The operator's RETENTION_DAYS (null: unset). */
  server_days: number | null;
}

export const effectiveRetention = (teamDays: number | null, serverDays: number | undefined): number | null =>
  teamDays === null ? (serverDays ?? null) : serverDays === undefined ? teamDays : Math.min(teamDays, serverDays);

export interface RetentionRun {
  /** Generations whose files were removed by this run. */
  generations: number;
  /** Transactions it took (one per batch). */
  batches: number;
  /** Scraped ads and brands whose media copies were removed. */
  ad_media: number;
  /** Stored keys deleted (or handed to the files job when storage failed). */
  files: number;
}

/**
 * Retention: the team's setting (owners, operators) and the daily job that removes the stored files
 * of generations older than the team's retention, and our copies of scraped ad media older than
 * AD_MEDIA_RETENTION_DAYS. Rows first (emptied and marked, with a files job queued in the same
 * transaction), files after the commit through the deleter's path: the same as a delete.
 */
export function createRetentionService({ db, config, log }: Pick<Deps, 'db' | 'config' | 'log'>, files: Pick<GenerationDeleter, 'deleteFiles'>) {
  const serverDays = config.retentionDays;
  const view = (teamDays: number | null): TeamRetention => ({ days: effectiveRetention(teamDays, serverDays), team_days: teamDays, server_days: serverDays ?? null });

  async function removeFiles(keys: readonly string[]): Promise<void> {
    if (!keys.length) return;
    await files.deleteFiles(keys).catch((err: unknown) => log.warn({ err }, 'files past their retention could not all be deleted now; the delete_stored_files job retries them'));
  }

  async function queueFilesJobs(trx: Deps['db'], keys: readonly string[]): Promise<void> {
    for (let i = 0; i < keys.length; i += MAX_KEYS_PER_JOB) {
      await queueJob(trx, deleteStoredFilesJob, { keys: keys.slice(i, i + MAX_KEYS_PER_JOB) }, { runAt: new Date(Date.now() + FILES_JOB_DELAY_MS) });
    }
  }

  /** One batch in one transaction; answers how many it expired and the keys deleted after its commit. */
  async function batch(expire: (trx: Deps['db']) => Promise<{ keys: string[] }[]>): Promise<{ count: number; keys: string[] }> {
    const done = await db.transaction().execute(async (trx) => {
      const rows = await expire(trx);
      const keys = rows.flatMap((r) => r.keys);
      await queueFilesJobs(trx, keys);
      return { count: rows.length, keys };
    });
    await removeFiles(done.keys);
    return done;
  }

  return {
    /** For a signed link whose file is missing: the retention that removed it, if one did. */
    async whyGone(key: string): Promise<string | undefined> {
      const generation = /^generations\/[0-9a-f-]{36}\/([0-9a-f-]{36})\//.exec(key)?.[1];
      if (generation) {
        const at = await filesExpiredAt(db, generation);
        return at ? `the file was removed on ${at.toISOString()} by the team's retention period (the generation is still there, with files_expired_at)` : undefined;
      }
      if (key.startsWith('ad-library/') && config.adMediaRetentionDays !== undefined) {
        return `the file does not exist: our copies of scraped ad media are kept ${config.adMediaRetentionDays} days after their scrape`;
      }
      return undefined;
    },

    async get(teamId: string): Promise<TeamRetention> {
      const team = await findTeam(db, requireUuid(teamId, 'team'));
      if (!team) throw new AppError('not_found', 'Team not found');
      return view(team.retention_days);
    },

    /**
     * Sets (or clears, with null) the team's own retention; never longer than the server's. A change
     * writes one audit line (`retention.changed`) in its own transaction; setting what is set writes none.
     */
    async set(teamId: string, input: unknown, actor: AuditActor): Promise<TeamRetention> {
      const id = requireUuid(teamId, 'team');
      const { days: wanted } = parseInput(teamRetentionInput, input);
      if (wanted !== null && serverDays !== undefined && wanted > serverDays) {
        throw new AppError('validation_error', `days: must be at most ${serverDays}, this server's retention (RETENTION_DAYS): a team may keep its files for less, never for longer`);
      }
      return db.transaction().execute(async (trx) => {
        const team = await lockTeam(trx, id);
        if (!team) throw new AppError('not_found', 'Team not found');
        if (team.retention_days === wanted) return view(wanted);
        await setTeamRetention(trx, id, wanted);
        await recordAudit(trx, id, actor, 'retention.changed', {
          team_days_before: team.retention_days,
          team_days_after: wanted,
          days_after: effectiveRetention(wanted, serverDays),
          server_days: serverDays ?? null,
        });
        return view(wanted);
      });
    },

    /** The daily job. `batchSize` is for tests; `now` too. */
    async run(opts: { batchSize?: number; now?: Date } = {}): Promise<RetentionRun> {
      const size = opts.batchSize ?? RETENTION_BATCH;
      const now = (opts.now ?? new Date()).getTime();
      const out: RetentionRun = { generations: 0, batches: 0, ad_media: 0, files: 0 };
      for (const team of await teamsWithRetention(db, serverDays)) {
        const keep = effectiveRetention(team.retention_days, serverDays);
        if (keep === null) continue;
        const cutoff = new Date(now - keep * DAY_MS);
        while (out.generations < MAX_PER_RUN) {
          const b = await batch(async (trx) =>
            (await expireGenerationFiles(trx, team.id, cutoff, size)).map((g) => ({ keys: [...g.result_keys, ...inputCopyKeys(g.id)] })),
          );
          out.batches++;
          out.generations += b.count;
          out.files += b.keys.length;
          if (b.count < size) break;
        }
      }
      if (config.adMediaRetentionDays !== undefined) {
        const cutoff = new Date(now - config.adMediaRetentionDays * DAY_MS);
        for (const expire of [expireAdMedia, expireBrandPictures]) {
          while (out.ad_media < MAX_PER_RUN) {
            const b = await batch((trx) => expire(trx, cutoff, size));
            out.batches++;
            out.ad_media += b.count;
            out.files += b.keys.length;
            if (b.count < size) break;
          }
        }
      }
      if (out.generations >= MAX_PER_RUN || out.ad_media >= MAX_PER_RUN) log.warn(out, 'retention: this run stopped at its cap; the next run goes on');
      return out;
    },
  };
}
export type RetentionService = ReturnType<typeof createRetentionService>;
