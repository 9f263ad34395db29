import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { AppError } from '../domain/errors.ts';
import { apiKeyHint, digestApiKey, generateApiKey } from '../domain/api-keys.ts';
import { httpUrl, teamCreate } from '../domain/inputs.ts';
import { DEFAULT_CREDITS } from '../domain/tiers.ts';
import { parseInput } from '../domain/validate.ts';
import type { Team } from '../db/types.ts';
import { insertApiKey, lockApiKey, revokeApiKey, setKeyRateLimit, setWebhookUrl } from '../repositories/api-keys.ts';
import { findTeam, insertTeam } from '../repositories/teams.ts';
import { notifyKeyRevoked } from '../repositories/notifications.ts';
import type { KeyCache } from './key-cache.ts';
import type { Deps } from './deps.ts';
import { requireUuid } from './ids.ts';
import { operatorActor, recordAudit, webhookUrlForAudit, type AuditActor } from './audit.ts';

export interface TeamView {
  id: string;
  name: string;
  tier: Team['tier'];
  credits_limit: number;
  credits_used: number;
}

export interface CreatedKey {
  id: string;
  key: string;
  webhook_secret: string;
  team_id: string;
}

export interface KeyView {
  id: string;
  team_id: string;
  hint: string;
  webhook_url: string | null;
  revoked_at: string | null;
}

const teamView = (t: Team): TeamView => ({
  id: t.id,
  name: t.name,
  tier: t.tier,
  credits_limit: t.credits_limit,
  credits_used: t.credits_used,
});

const webhookUrl = z.object({ webhook_url: httpUrl.nullish() });
const bucketNumber = z.coerce.number({ message: 'must be a whole number from 1 to 1000000' }).int('must be a whole number from 1 to 1000000').min(1, 'must be a whole number from 1 to 1000000').max(1_000_000, 'must be a whole number from 1 to 1000000');
const keyRateLimit = z.object({ per_minute: bucketNumber, burst: bucketNumber });

// Standard base64 after whsec_, as the Standard Webhooks libraries read a secret.
export const newWebhookSecret = (): string => `whsec_${randomBytes(32).toString('base64')}`;

/** Administration of teams and keys: the CLI's side of what the spec calls "the dashboard". */
export function createTeamService({ db }: Pick<Deps, 'db'>, keyCache?: KeyCache) {
  /** A key that changed (revoked, a new limit): this node's cache forgets it now, the other nodes' on the notice. */
  async function forgetEverywhere(keyId: string): Promise<void> {
    keyCache?.forgetKey(keyId);
    await notifyKeyRevoked(db, keyId);
  }

  return {
    async createTeam(input: unknown): Promise<TeamView> {
      const t = parseInput(teamCreate, input);
      const team = await insertTeam(db, {
        name: t.name,
        tier: t.tier,
        credits_limit: t.credits_limit ?? DEFAULT_CREDITS[t.tier],
      });
      return teamView(team);
    },

    async getTeam(id: string): Promise<TeamView> {
      const team = await findTeam(db, requireUuid(id, 'team'));
      if (!team) throw new AppError('not_found', 'Team not found');
      return teamView(team);
    },

    /** The only moment the key exists in clear text: only its SHA-256 digest is stored. */
    async createKey(teamId: string, opts: { webhook_url?: string | null; name?: string; created_by?: string | null } = {}, actor: AuditActor = operatorActor()): Promise<CreatedKey> {
      const team = await findTeam(db, requireUuid(teamId, 'team'));
      if (!team) throw new AppError('not_found', 'Team not found');
      const { webhook_url } = parseInput(webhookUrl, opts);
      const key = generateApiKey();
      const webhookSecret = newWebhookSecret();
      const row = await db.transaction().execute(async (trx) => {
        const row = await insertApiKey(trx, {
          team_id: team.id,
          key_digest: digestApiKey(key),
          key_hint: apiKeyHint(key),
          webhook_url: webhook_url ?? null,
          webhook_secret: webhookSecret,
          name: opts.name ?? '',
          created_by: opts.created_by ?? null,
        });
        await recordAudit(trx, team.id, actor, 'api_key.created', { ...keyDetail(row), webhook_url: webhookUrlForAudit(row.webhook_url) });
        return row;
      });
      return { id: row.id, key, webhook_secret: webhookSecret, team_id: team.id };
    },

    /** Revoking a revoked key changes nothing and writes no audit line. */
    async revokeKey(keyId: string, actor: AuditActor = operatorActor()): Promise<KeyView> {
      const id = requireUuid(keyId, 'key');
      const row = await db.transaction().execute(async (trx) => {
        const before = await lockApiKey(trx, id);
        if (!before) throw new AppError('not_found', 'API key not found');
        if (before.revoked_at) return before;
        const row = (await revokeApiKey(trx, id))!;
        await recordAudit(trx, row.team_id, actor, 'api_key.revoked', keyDetail(row));
        return row;
      });
      await forgetEverywhere(row.id);
      return keyView(row);
    },

    /**
     * A key's own token bucket (`null`: back to its tier's). Every node's cache forgets the key at
     * once (the revocation notice), so the new limit holds everywhere within a second.
     */
    async setRateLimit(keyId: string, limit: { per_minute?: unknown; burst?: unknown } | null, actor: AuditActor = operatorActor()): Promise<KeyView & { rate_limit: { per_minute: number; burst: number } | null }> {
      const rule = limit === null ? null : parseInput(keyRateLimit, limit);
      const id = requireUuid(keyId, 'key');
      const row = await db.transaction().execute(async (trx) => {
        const row = await setKeyRateLimit(trx, id, rule && { perMinute: rule.per_minute, burst: rule.burst });
        if (!row) throw new AppError('not_found', 'API key not found');
        await recordAudit(trx, row.team_id, actor, 'api_key.rate_limit_set', { ...keyDetail(row), per_minute: rule?.per_minute ?? null, burst: rule?.burst ?? null, tier_default: rule === null });
        return row;
      });
      await forgetEverywhere(row.id);
      return { ...keyView(row), rate_limit: row.rate_per_minute && row.rate_burst ? { per_minute: row.rate_per_minute, burst: row.rate_burst } : null };
    },

    async setWebhook(keyId: string, url: string | null, actor: AuditActor = operatorActor()): Promise<KeyView> {
      const { webhook_url } = parseInput(webhookUrl, { webhook_url: url });
      const id = requireUuid(keyId, 'key');
      const row = await db.transaction().execute(async (trx) => {
        const before = await lockApiKey(trx, id);
        if (!before) throw new AppError('not_found', 'API key not found');
        const row = (await setWebhookUrl(trx, id, webhook_url ?? null))!;
        await recordAudit(trx, row.team_id, actor, 'webhook.url_changed', { ...keyDetail(row), url_before: webhookUrlForAudit(before.webhook_url), url_after: webhookUrlForAudit(row.webhook_url) });
        return row;
      });
      return keyView(row);
    },
  };
}
export type TeamService = ReturnType<typeof createTeamService>;

/** How an audit line names a key: never the key, only what the dashboard shows of it. */
export const keyDetail = (row: { id: string; key_hint: string; name: string }) => ({ key_id: row.id, key_hint: row.key_hint, key_name: row.name });

function keyView(row: { id: string; team_id: string; key_hint: string; webhook_url: string | null; revoked_at: Date | null }): KeyView {
  return {
    id: row.id,
    team_id: row.team_id,
    hint: row.key_hint,
    webhook_url: row.webhook_url,
    revoked_at: row.revoked_at?.toISOString() ?? null,
  };
}
