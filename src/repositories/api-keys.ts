import { sql } from 'kysely';
import type { BucketRule } from '../domain/rate-limit.ts';
import { prepareHot, type Db } from '../db/pool.ts';
import type { ApiKeyRow, Team } from '../db/types.ts';

export async function insertApiKey(
  db: Db,
  k: { team_id: string; key_digest: Buffer; key_hint: string; webhook_url: string | null; webhook_secret: string; name?: string; created_by?: string | null },
): Promise<ApiKeyRow> {
  return db.insertInto('api_keys').values(k).returningAll().executeTakeFirstOrThrow();
}

export async function findActiveKeyByDigest(
  db: Db,
  digest: Buffer,
): Promise<{ key_id: string; team_id: string; tier: Team['tier']; rate_per_minute: number | null; rate_burst: number | null } | undefined> {
  const q = db
    .selectFrom('api_keys')
    .innerJoin('teams', 'teams.id', 'api_keys.team_id')
    .select(['api_keys.id as key_id', 'api_keys.team_id', 'teams.tier', 'api_keys.rate_per_minute', 'api_keys.rate_burst'])
    .where('api_keys.key_digest', '=', digest)
    .where('api_keys.revoked_at', 'is', null);
  // Every request runs it: compiled here once per call and prepared once per connection.
  return (await db.executeQuery(prepareHot('adforge_key_by_digest', q.compile()))).rows[0];
}

export async function revokeApiKey(db: Db, id: string): Promise<ApiKeyRow | undefined> {
  return db
    .updateTable('api_keys')
    .set((eb) => ({ revoked_at: eb.fn.coalesce('revoked_at', eb.fn<Date>('now')) }))
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

export async function setWebhookUrl(db: Db, id: string, url: string | null): Promise<ApiKeyRow | undefined> {
  return db.updateTable('api_keys').set({ webhook_url: url }).where('id', '=', id).returningAll().executeTakeFirst();
}

/** Where and how a live key's webhooks go; a revoked key has none. */
export function findActiveWebhook(db: Db, keyId: string): Promise<{ webhook_url: string | null; webhook_secret: string } | undefined> {
  return db.selectFrom('api_keys').select(['webhook_url', 'webhook_secret']).where('id', '=', keyId).where('revoked_at', 'is', null).executeTakeFirst();
}

export async function setKeyRateLimit(db: Db, id: string, rule: BucketRule | null): Promise<ApiKeyRow | undefined> {
  return db
    .updateTable('api_keys')
    .set({ rate_per_minute: rule?.perMinute ?? null, rate_burst: rule?.burst ?? null })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

export async function touchKeysLastUsed(db: Db, uses: { id: string; at: Date }[]): Promise<void> {
  await sql`
    update api_keys k set last_used_at = greatest(k.last_used_at, u.at)
    from unnest(${uses.map((u) => u.id)}::uuid[], ${uses.map((u) => u.at.toISOString())}::timestamptz[]) as u(id, at)
    where k.id = u.id`.execute(db);
}

export function listTeamKeys(db: Db, teamId: string): Promise<ApiKeyRow[]> {
  return db.selectFrom('api_keys').selectAll().where('team_id', '=', teamId).orderBy('created_at', 'desc').orderBy('id').execute();
}

export function findTeamKey(db: Db, teamId: string, id: string): Promise<ApiKeyRow | undefined> {
  return db.selectFrom('api_keys').selectAll().where('team_id', '=', teamId).where('id', '=', id).executeTakeFirst();
}

export function renameApiKey(db: Db, id: string, name: string): Promise<ApiKeyRow | undefined> {
  return db.updateTable('api_keys').set({ name }).where('id', '=', id).returningAll().executeTakeFirst();
}

export function setWebhookSecret(db: Db, id: string, secret: string): Promise<ApiKeyRow | undefined> {
  return db.updateTable('api_keys').set({ webhook_secret: secret }).where('id', '=', id).where('revoked_at', 'is', null).returningAll().executeTakeFirst();
}

/** The key's row locked for a change: what it was before, for the change's audit line. */
export function lockApiKey(db: Db, id: string): Promise<ApiKeyRow | undefined> {
  return db.selectFrom('api_keys').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
}
