import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { canManage } from '../domain/dashboard-users.ts';
import { AppError } from '../domain/errors.ts';
import { queueJob } from '../jobs/define.ts';
import { deleteStoredFilesJob } from '../jobs/delete-stored-files.ts';
import { exportTeamJob } from '../jobs/export-team.ts';
import { completeTeamExport, failTeamExport, findTeamExport, hasRunningExport, insertTeamExport, listTeamExports, lockLiveTeam, markExportDownloaded, type TeamExportRow } from '../repositories/team-exports.ts';
import { actorOf, recordAudit } from './audit.ts';
import type { Deps } from './deps.ts';
import { requireUuid } from './ids.ts';
import type { DashboardPrincipal } from './sessions.ts';
import type { TeamExporter } from './team-export.ts';

/** The download link lives this long, and is handed out once. */
export const EXPORT_LINK_TTL_SECONDS = 15 * 60;
/** An archive nobody downloaded is deleted this long after it was made. */
export const EXPORT_KEPT_MS = 7 * 24 * 3600_000;
const ARCHIVE_TYPE = 'application/gzip';

type ExportRow = TeamExportRow;

export interface TeamExportView {
  id: string;
  status: ExportRow['status'];
  /** Bytes of the archive, once made. */
  size: number | null;
  error: string | null;
  created_at: string;
  completed_at: string | null;
  /** When its one download link was handed out. */
  downloaded_at: string | null;
  /** Until when a download can be asked for (null while it is being made). */
  available_until: string | null;
}

export interface TeamExportDownload {
  url: string;
  expires_at: string;
}

const availableUntil = (r: ExportRow): Date | null => (r.status === 'completed' && r.completed_at ? new Date(r.completed_at.getTime() + EXPORT_KEPT_MS) : null);

const view = (r: ExportRow): TeamExportView => ({
  id: r.id,
  status: r.status,
  size: r.size === null ? null : Number(r.size),
  error: r.error,
  created_at: r.created_at.toISOString(),
  completed_at: r.completed_at?.toISOString() ?? null,
  downloaded_at: r.downloaded_at?.toISOString() ?? null,
  available_until: availableUntil(r)?.toISOString() ?? null,
});

export const exportArchiveKey = (teamId: string, exportId: string): string => `exports/${teamId}/${exportId}.tar.gz`;

/**
 * An owner's "Export everything": a job builds the archive (the same one `adforge team export`
 * writes) into storage; the owner asks for its link once, a signed link that expires, and the
 * archive is deleted after it (or after EXPORT_KEPT_MS when never asked for).
 */
export function createTeamExports({ db, storage, log }: Pick<Deps, 'db' | 'storage' | 'log'>, exporter: TeamExporter) {
  const requireOwner = (actor: DashboardPrincipal) => {
    if (!canManage(actor.role)) throw new AppError('forbidden', 'Only a team owner can export the team');
  };
  async function own(actor: DashboardPrincipal, id: unknown): Promise<ExportRow> {
    requireOwner(actor);
    const exportId = requireUuid(id, 'export');
    const row = await findTeamExport(db, exportId, actor.teamId);
    if (!row) throw new AppError('not_found', 'Export not found');
    return row;
  }

  return {
    async start(actor: DashboardPrincipal): Promise<TeamExportView> {
      requireOwner(actor);
      return db.transaction().execute(async (trx) => {
        if (!(await lockLiveTeam(trx, actor.teamId))) throw new AppError('not_found', 'Team not found');
        if (await hasRunningExport(trx, actor.teamId)) throw new AppError('conflict', 'An export of this team is already being made: wait for it to finish');
        const row = await insertTeamExport(trx, actor.teamId, actor.userId);
        await recordAudit(trx, actor.teamId, actorOf(actor), 'team.export_started', { via: 'dashboard', export_id: row.id });
        await queueJob(trx, exportTeamJob, { export_id: row.id });
        return view(row);
      });
    },

    async get(actor: DashboardPrincipal, id: unknown): Promise<TeamExportView> {
      return view(await own(actor, id));
    },

    async list(actor: DashboardPrincipal): Promise<TeamExportView[]> {
      requireOwner(actor);
      return (await listTeamExports(db, actor.teamId, 20)).map(view);
    },

    /** The archive's link, once: a second call is refused (start a new export), and the archive is deleted once the link expires. */
    async download(actor: DashboardPrincipal, id: unknown): Promise<TeamExportDownload> {
      const row = await own(actor, id);
      if (row.status !== 'completed' || !row.archive_key) throw new AppError('conflict', `The export is ${row.status}: only a completed export can be downloaded`);
      const until = availableUntil(row)!;
      if (until <= new Date()) throw new AppError('conflict', 'The export has expired: start a new one');
      const expiresAt = new Date(Date.now() + EXPORT_LINK_TTL_SECONDS * 1000);
      return db.transaction().execute(async (trx) => {
        if (!(await markExportDownloaded(trx, row.id))) throw new AppError('conflict', 'The link of this export was already handed out: start a new export');
        await queueJob(trx, deleteStoredFilesJob, { keys: [row.archive_key!] }, { runAt: new Date(expiresAt.getTime() + 60_000) });
        return { url: await storage.signedUrl(row.archive_key!, EXPORT_LINK_TTL_SECONDS), expires_at: expiresAt.toISOString() };
      });
    },

    /** The job: builds the archive in a temporary file, stores it, records it. A failure is recorded, not retried: the owner starts another. */
    async run(exportId: string): Promise<void> {
      const row = await findTeamExport(db, exportId);
      if (!row || row.status !== 'processing') return;
      const dir = await mkdtemp(path.join(os.tmpdir(), 'adforge-team-export-'));
      const file = path.join(dir, 'export.tar.gz');
      const key = exportArchiveKey(row.team_id, row.id);
      try {
        await exporter.write(row.team_id, createWriteStream(file), { audit: false });
        const { size } = await stat(file);
        await storage.putStream(key, createReadStream(file), { contentType: ARCHIVE_TYPE, maxBytes: size, size });
        await db.transaction().execute(async (trx) => {
          const done = await completeTeamExport(trx, row.id, key, size);
          // Deleted meanwhile (the team with it): the archive goes at once, by the job below.
          await queueJob(trx, deleteStoredFilesJob, { keys: [key] }, { runAt: new Date(Date.now() + (done ? EXPORT_KEPT_MS : 0)) });
        });
      } catch (err) {
        log.warn({ err, export_id: row.id }, 'a team export failed');
        await failTeamExport(db, row.id, 'the export could not be made; start another');
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
  };
}
export type TeamExports = ReturnType<typeof createTeamExports>;
