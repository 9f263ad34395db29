import { z } from 'zod';
import { AppError } from '../domain/errors.ts';
import { canManage } from '../domain/dashboard-users.ts';
import { httpUrl } from '../domain/inputs.ts';
import { parseInput } from '../domain/validate.ts';
import type { ApiKeyRow } from '../db/types.ts';
import { findTeamKey, listTeamKeys, renameApiKey, setWebhookSecret } from '../repositories/api-keys.ts';
import { actorOf, recordAudit } from './audit.ts';
import type { Deps } from './deps.ts';
import type { KeyPrincipal } from './principal.ts';
import { requireUuid } from './ids.ts';
import type { KeyUsage } from './key-usage.ts';
import type { DashboardPrincipal } from './sessions.ts';
import { keyDetail, newWebhookSecret, type TeamService } from './teams.ts';

export interface TeamKeyView {
  id: string;
  name: string;
  /** The key's first and last characters: enough to recognise it, never to use it. */
  hint: string;
  webhook_url: string | null;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

const keyName = z.string().trim().max(100, 'must be at most 100 characters');
const newKey = z.object({ name: keyName.default(''), webhook_url: httpUrl.nullish() });
const rename = z.object({ name: keyName });

const view = (k: ApiKeyRow): TeamKeyView => ({
  id: k.id,
  name: k.name,
  hint: k.key_hint,
  webhook_url: k.webhook_url,
  created_at: k.created_at.toISOString(),
  last_used_at: k.last_used_at?.toISOString() ?? null,
  revoked_at: k.revoked_at?.toISOString() ?? null,
});

/**
 * Settings > API Keys: what the spec says the dashboard does with keys, for a team's owners.
 * Every key is looked up within the owner's team, so another team's key is a 404.
 */
export function createTeamKeyService({ db }: Pick<Deps, 'db'>, teams: TeamService, usage: KeyUsage) {
  function requireOwner(actor: DashboardPrincipal): void {
    if (!canManage(actor.role)) throw new AppError('forbidden', 'Only a team owner can manage API keys');
  }
  async function own(actor: DashboardPrincipal, id: unknown): Promise<ApiKeyRow> {
    requireOwner(actor);
    const key = await findTeamKey(db, actor.teamId, requireUuid(id, 'key'));
    if (!key) throw new AppError('not_found', 'API key not found');
    return key;
  }
  const live = async (actor: DashboardPrincipal, id: unknown): Promise<ApiKeyRow> => {
    const key = await own(actor, id);
    if (key.revoked_at) throw new AppError('conflict', 'This API key is revoked');
    return key;
  };
  const reread = async (actor: DashboardPrincipal, id: string): Promise<TeamKeyView> => view((await findTeamKey(db, actor.teamId, id))!);

  return {
    async list(actor: DashboardPrincipal): Promise<TeamKeyView[]> {
      requireOwner(actor);
      // This node's uses not yet written: so a key just tried shows as used.
      await usage.flush();
      return (await listTeamKeys(db, actor.teamId)).map(view);
    },

    /** The key and its webhook secret in clear text, this once. */
    async create(actor: DashboardPrincipal, input: unknown): Promise<TeamKeyView & { key: string; webhook_secret: string }> {
      requireOwner(actor);
      const k = parseInput(newKey, input ?? {});
      const created = await teams.createKey(actor.teamId, { webhook_url: k.webhook_url ?? null, name: k.name, created_by: actor.userId }, actorOf(actor));
      return { ...(await reread(actor, created.id)), key: created.key, webhook_secret: created.webhook_secret };
    },

    async rename(actor: DashboardPrincipal, id: unknown, input: unknown): Promise<TeamKeyView> {
      const key = await own(actor, id);
      const { name } = parseInput(rename, input);
      return db.transaction().execute(async (trx) => {
        const row = (await renameApiKey(trx, key.id, name))!;
        await recordAudit(trx, actor.teamId, actorOf(actor), 'api_key.renamed', { ...keyDetail(row), name_before: key.name, name_after: row.name });
        return view(row);
      });
    },

    async revoke(actor: DashboardPrincipal, id: unknown): Promise<TeamKeyView> {
      const key = await own(actor, id);
      await teams.revokeKey(key.id, actorOf(actor));
      return reread(actor, key.id);
    },

    /** The same URL rules (and SSRF checks at delivery) as the CLI's set-webhook. */
    async setWebhook(actor: DashboardPrincipal, id: unknown, url: string | null): Promise<TeamKeyView> {
      const key = await live(actor, id);
      await teams.setWebhook(key.id, url, actorOf(actor));
      return reread(actor, key.id);
    },

    /** A new secret at once: receivers verifying with the old one refuse the next delivery. */
    async rotateWebhookSecret(actor: DashboardPrincipal, id: unknown): Promise<TeamKeyView & { webhook_secret: string }> {
      const key = await live(actor, id);
      const secret = newWebhookSecret();
      const row = await db.transaction().execute(async (trx) => {
        const row = await setWebhookSecret(trx, key.id, secret);
        if (!row) throw new AppError('conflict', 'This API key is revoked');
        await recordAudit(trx, actor.teamId, actorOf(actor), 'webhook.secret_rotated', keyDetail(row));
        return row;
      });
      return { ...view(row), webhook_secret: secret };
    },

    /** The key as the webhooks service's caller: its deliveries, its test event, its redeliveries. */
    async asKey(actor: DashboardPrincipal, id: unknown): Promise<KeyPrincipal> {
      const key = await own(actor, id);
      return { teamId: actor.teamId, keyId: key.id, userId: actor.userId };
    },
  };
}
