import { AppError } from '../domain/errors.ts';
import { formatBytes } from '../domain/storage-quota.ts';
import type { Tier } from '../domain/tiers.ts';
import type { Storage } from '../adapters/storage/storage.ts';
import { findTeam } from '../repositories/teams.ts';
import {
  liveTeamIds,
  setGenerationBytes,
  setImageBytes,
  setVoiceoverBytes,
  teamStorage,
  teamStoredRows,
} from '../repositories/storage-usage.ts';
import { inputCopyKeys } from './generations/input-keys.ts';
import { requireUuid } from './ids.ts';
import type { Deps } from './deps.ts';

/** Bytes a team stores, by kind, and its tier's quota (null: none). */
export interface TeamStorageUsage {
  outputs_bytes: number;
  inputs_bytes: number;
  uploads_bytes: number;
  total_bytes: number;
  quota_bytes: number | null;
}

/**
 * Storage usage per team: read from the counters the database keeps (migration 0021), checked
 * against the tier's quota before an upload or a generation is accepted, and recounted from
 * storage for rows written before sizes were recorded.
 */
export function createStorageUsage({ db, config, storage }: Pick<Deps, 'db' | 'config' | 'storage'>) {
  const quotaOf = (tier: string): number | null => config.storageQuotas[tier as Tier] ?? null;

  async function usage(teamId: string, tier?: string): Promise<TeamStorageUsage> {
    const bytes = await teamStorage(db, teamId);
    const t = tier ?? (await findTeam(db, teamId))?.tier;
    return { ...bytes, total_bytes: bytes.outputs_bytes + bytes.inputs_bytes + bytes.uploads_bytes, quota_bytes: t ? quotaOf(t) : null };
  }

  // The size comes with the opened object; its bytes are never read.
  async function sizeOf(key: string): Promise<number> {
    const o = await storage.openStream(key);
    o?.stream.destroy();
    return o?.size ?? 0;
  }
  const sizesOf = async (keys: readonly string[]) => (await Promise.all(keys.map(sizeOf))).reduce((a, b) => a + b, 0);

  return {
    get: (teamId: string) => usage(teamId),

    /** The operator's read (`adforge storage show`): a missing or deleted team is not_found. */
    async show(teamId: string): Promise<TeamStorageUsage & { team_id: string }> {
      const team = await findTeam(db, requireUuid(teamId, 'team'));
      if (!team) throw new AppError('not_found', 'Team not found');
      return { team_id: teamId, ...(await usage(teamId, team.tier)) };
    },

    ensureRoom: (teamId: string, what: { upload: number } | { generation: true }) => ensureStorageRoom({ db, config }, teamId, what),

    /**
     * Reads from storage the size of every file the team's rows name and records it where it
     * differs (rows written before migration 0021 have 0); the counters follow. Uploads recorded
     * their size from the start and are not read.
     */
    async recount(teamId: string): Promise<{ rows_changed: number }> {
      const rows = await teamStoredRows(db, teamId);
      let changed = 0;
      for (const g of rows.generations) {
        const output_bytes = await sizesOf(g.result_keys);
        const input_bytes = g.files_expired_at ? 0 : await sizesOf(inputCopyKeys(g.id));
        if (output_bytes === g.output_bytes && input_bytes === g.input_bytes) continue;
        await setGenerationBytes(db, g.id, { output_bytes, input_bytes });
        changed++;
      }
      for (const [table, list] of [['products', rows.products], ['avatars', rows.avatars]] as const) {
        for (const r of list) {
          const bytes = await sizeOf(r.image_key);
          if (bytes === r.image_bytes) continue;
          await setImageBytes(db, table, r.id, bytes);
          changed++;
        }
      }
      for (const v of rows.voiceovers) {
        const bytes = await sizeOf(v.audio_key);
        if (bytes === v.audio_bytes) continue;
        await setVoiceoverBytes(db, v.id, bytes);
        changed++;
      }
      return { rows_changed: changed };
    },

    /** Every team that is not deleted. */
    teamIds: () => liveTeamIds(db),
  };
}

/**
 * Refuses (403 forbidden, naming the quota) when the team's tier has a quota and storing `upload`
 * more bytes would pass it; a generation (whose results' size is not known before) is refused once
 * the quota is used up. Read before anything is written: requests in flight at the same moment may
 * each pass, and a generation's results may go past the quota (the next one is then refused).
 */
export async function ensureStorageRoom({ db, config }: Pick<Deps, 'db' | 'config'>, teamId: string, what: { upload: number } | { generation: true }): Promise<void> {
  if (Object.keys(config.storageQuotas).length === 0) return;
  const team = await findTeam(db, teamId);
  const quota = team ? (config.storageQuotas[team.tier as Tier] ?? null) : null;
  if (quota === null) return;
  const bytes = await teamStorage(db, teamId);
  const used = bytes.outputs_bytes + bytes.inputs_bytes + bytes.uploads_bytes;
  const adding = 'upload' in what ? what.upload : 0;
  const over = 'upload' in what ? used + adding > quota : used >= quota;
  if (!over) return;
  const stored = `this team stores ${formatBytes(used)} of the ${formatBytes(quota)} storage quota of its ${team!.tier} tier`;
  throw new AppError(
    'forbidden',
    'upload' in what
      ? `Storage quota exceeded: ${stored}, and this upload is ${formatBytes(adding)}; delete generations, uploads or products to make room`
      : `Storage quota exceeded: ${stored}, so no new generation is accepted; delete generations, uploads or products to make room`,
  );
}
