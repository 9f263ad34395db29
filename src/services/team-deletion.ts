import { AppError } from '../domain/errors.ts';
import { queueJob } from '../jobs/define.ts';
import { deleteStoredFilesJob, MAX_KEYS_PER_JOB } from '../jobs/delete-stored-files.ts';
import { notifyKeyRevoked } from '../repositories/notifications.ts';
import {
  countTeamGenerations,
  deleteTeamKeyDeliveries,
  deleteTeamRows,
  deleteTeamSessions,
  findTeamRecord,
  forgetLedgerEmails,
  markTeamDeleted,
  processingGenerationIds,
  revokeTeamKeys,
  tablesWithTeamId,
  teamFileKeys,
} from '../repositories/team-data.ts';
import { canManage } from '../domain/dashboard-users.ts';
import { actorOf, operatorActor, recordAudit, type AuditActor } from './audit.ts';
import type { Deps } from './deps.ts';
import type { Principal } from './principal.ts';
import type { GenerationCanceller } from './generations/cancel.ts';
import type { GenerationDeleter } from './generations/delete.ts';
import { requireUuid } from './ids.ts';
import type { KeyCache } from './key-cache.ts';
import type { DashboardPrincipal } from './sessions.ts';

/**
 * What stays of a deleted team, for the operator's accounts: the team's row as a tombstone
 * (deleted_at), its ledger lines (DESIGN decision 19: never deleted), its top-ups, the tombstones
 * of its generations (what the ledger lines name) and its audit log lines (kept until their own
 * retention purge). Every other table with a team_id loses the team's rows.
 */
export const KEPT_AFTER_TEAM_DELETION = ['teams', 'credit_ledger', 'credit_top_ups', 'deleted_generations', 'audit_log'] as const;

/**
 * Tables deleted in this order, before any other team table (foreign keys between them: campaign
 * rows point at voiceovers, keys name the people who made them); tables not listed follow.
 */
const DELETION_ORDER = ['team_exports', 'campaigns', 'voiceovers', 'ad_library_scrape_jobs', 'products', 'avatars', 'brands', 'uploads', 'idempotency_keys', 'rate_limit_hits', 'credit_holds', 'users', 'api_keys'];

const FILES_JOB_DELAY_MS = 5 * 60_000;
/** Rounds of cancel-then-delete: a generation created in the moment of the revocation is caught by the next round. */
const GENERATION_ROUNDS = 5;

export interface TeamDeleted {
  team_id: string;
  deleted_at: string;
  /** Processing generations cancelled (and refunded) before their deletion. */
  generations_cancelled: number;
  generations_deleted: number;
  keys_revoked: number;
  sessions_ended: number;
  /** Rows deleted, by table (generations counted above). */
  rows_deleted: Record<string, number>;
  files_deleted: number;
  kept: readonly string[];
}

/**
 * Deleting a team. First, in one transaction: the team marked deleted (every path reads it as
 * absent from then on), every key revoked and every session ended, with the notices that make
 * every node drop them at once. Then its processing generations are cancelled (refunded, as any
 * cancel), every generation deleted the way a generation delete does it, every other row deleted,
 * and its files deleted after the commit with a retrying job behind. Running it again finishes
 * whatever a first run left (a crash, a file that failed) and changes nothing else.
 */
export function createTeamDeleter(
  { db, log }: Pick<Deps, 'db' | 'log'>,
  deps: { keyCache?: Pick<KeyCache, 'forgetKey'>; canceller: Pick<GenerationCanceller, 'cancel'>; deleter: Pick<GenerationDeleter, 'removeMany' | 'deleteFiles'> },
) {
  async function revokeEverything(teamId: string, actor: AuditActor): Promise<{ deletedAt: Date; keys: string[]; sessions: number }> {
    const done = await db.transaction().execute(async (trx) => {
      const team = await findTeamRecord(trx, teamId, { lock: true });
      if (!team) throw new AppError('not_found', 'Team not found');
      await recordAudit(trx, team.id, actor, 'team.deletion_started', { team_name: team.name, already_deleted: team.deleted_at !== null });
      const deletedAt = await markTeamDeleted(trx, team.id);
      const keys = await revokeTeamKeys(trx, team.id);
      const sessions = await deleteTeamSessions(trx, team.id);
      for (const k of keys) await notifyKeyRevoked(trx, k);
      return { deletedAt, keys, sessions };
    });
    for (const k of done.keys) deps.keyCache?.forgetKey(k);
    return done;
  }

  async function deleteGenerations(teamId: string): Promise<{ cancelled: number; deleted: number }> {
    const p: Principal = { teamId, keyId: null };
    let cancelled = 0;
    let deleted = 0;
    for (let round = 0; round < GENERATION_ROUNDS; round++) {
      for (const id of await processingGenerationIds(db, teamId)) {
        try {
          await deps.canceller.cancel(p, id);
          cancelled++;
        } catch (e) {
          // Ended otherwise meanwhile (completed, failed, deleted): it is deleted below all the same.
          if (!(e instanceof AppError && (e.code === 'conflict' || e.code === 'not_found'))) throw e;
        }
      }
      for (const status of ['completed', 'failed'] as const) {
        for (;;) {
          const r = await deps.deleter.removeMany(p, { filter: { status } });
          deleted += r.deleted;
          if (!r.has_more || r.deleted === 0) break;
        }
      }
      if ((await countTeamGenerations(db, teamId)) === 0) return { cancelled, deleted };
    }
    throw new AppError('conflict', 'The team still has generations being made: run the deletion again');
  }

  async function deleteRest(teamId: string): Promise<{ rows: Record<string, number>; keys: string[] }> {
    return db.transaction().execute(async (trx) => {
      const keys = await teamFileKeys(trx, teamId);
      const rows: Record<string, number> = {};
      await forgetLedgerEmails(trx, teamId);
      const deliveries = await deleteTeamKeyDeliveries(trx, teamId);
      if (deliveries) rows.webhook_deliveries = deliveries;
      const present = await tablesWithTeamId(trx);
      const kept = new Set<string>(KEPT_AFTER_TEAM_DELETION);
      const order = [...DELETION_ORDER.filter((t) => present.includes(t)), ...present.filter((t) => !DELETION_ORDER.includes(t))];
      for (const table of order) {
        if (kept.has(table)) continue;
        const n = await deleteTeamRows(trx, table, teamId);
        if (n) rows[table] = n;
      }
      for (let i = 0; i < keys.length; i += MAX_KEYS_PER_JOB) {
        await queueJob(trx, deleteStoredFilesJob, { keys: keys.slice(i, i + MAX_KEYS_PER_JOB) }, { runAt: new Date(Date.now() + FILES_JOB_DELAY_MS) });
      }
      return { rows, keys };
    });
  }

  const deleter = {
    /** An owner's delete from the dashboard, behind the team's name typed back exactly. */
    async removeAsOwner(actor: DashboardPrincipal, confirmName: unknown): Promise<TeamDeleted> {
      if (!canManage(actor.role)) throw new AppError('forbidden', 'Only a team owner can delete the team');
      const team = await findTeamRecord(db, actor.teamId);
      if (!team || team.deleted_at) throw new AppError('not_found', 'Team not found');
      if (typeof confirmName !== 'string' || confirmName !== team.name) {
        throw new AppError('validation_error', "confirm_name: type the team's name exactly as it is shown to confirm the deletion");
      }
      return deleter.remove(team.id, actorOf(actor));
    },

    /** `actor`: who asked (the operator at the CLI unless said otherwise), for the audit log. */
    async remove(teamId: unknown, actor: AuditActor = operatorActor()): Promise<TeamDeleted> {
      const id = requireUuid(teamId, 'team');
      const revoked = await revokeEverything(id, actor);
      const generations = await deleteGenerations(id);
      const rest = await deleteRest(id);
      let filesDeleted = rest.keys.length;
      try {
        await deps.deleter.deleteFiles(rest.keys);
      } catch (err) {
        filesDeleted = 0;
        log.warn({ err, team_id: id }, 'some files of a deleted team could not be deleted now; the delete_stored_files job retries them');
      }
      return {
        team_id: id,
        deleted_at: revoked.deletedAt.toISOString(),
        generations_cancelled: generations.cancelled,
        generations_deleted: generations.deleted,
        keys_revoked: revoked.keys.length,
        sessions_ended: revoked.sessions,
        rows_deleted: rest.rows,
        files_deleted: filesDeleted,
        kept: KEPT_AFTER_TEAM_DELETION,
      };
    },
  };
  return deleter;
}
