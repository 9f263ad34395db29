import { sql } from 'kysely';
import type { Db } from '../db/pool.ts';
import type { GenerationRow } from '../db/types.ts';
import type { LedgerLine } from './ledger.ts';

// A team's data as a whole: what its export reads and what its deletion removes. Tables added
// after this file (uploads, team_exports, teams.deleted_at) are reached through SQL text, so the
// file does not depend on the typed schema growing with them.

export interface TeamRecord {
  id: string;
  name: string;
  tier: string;
  credits_limit: number;
  credits_used: number;
  period_started_at: Date;
  created_at: Date;
  deleted_at: Date | null;
}

/** The team, deleted or not (a deleted team is absent for every other path). */
export async function findTeamRecord(db: Db, id: string, opts: { lock?: boolean } = {}): Promise<TeamRecord | undefined> {
  const lock = opts.lock ? sql`for update` : sql``;
  const { rows } = await sql<TeamRecord>`select id, name, tier, credits_limit, credits_used, period_started_at, created_at, deleted_at
    from teams where id = ${id} ${lock}`.execute(db);
  return rows[0];
}

export async function markTeamDeleted(db: Db, id: string): Promise<Date> {
  const { rows } = await sql<{ deleted_at: Date }>`update teams set deleted_at = coalesce(deleted_at, now()) where id = ${id} returning deleted_at`.execute(db);
  return rows[0]!.deleted_at;
}

/** Every key of the team revoked (those already revoked keep their time); answers every key's id. */
export async function revokeTeamKeys(db: Db, teamId: string): Promise<string[]> {
  const { rows } = await sql<{ id: string }>`update api_keys set revoked_at = coalesce(revoked_at, now()) where team_id = ${teamId} returning id`.execute(db);
  return rows.map((r) => r.id);
}

/** Every session of the team's people (the sessions trigger tells every node). */
export async function deleteTeamSessions(db: Db, teamId: string): Promise<number> {
  const { numAffectedRows } = await sql`delete from sessions where user_id in (select id from users where team_id = ${teamId})`.execute(db);
  return Number(numAffectedRows ?? 0);
}

export async function processingGenerationIds(db: Db, teamId: string): Promise<string[]> {
  const { rows } = await sql<{ id: string }>`select id from generations where team_id = ${teamId} and status = 'processing' order by created_at`.execute(db);
  return rows.map((r) => r.id);
}

export async function countTeamGenerations(db: Db, teamId: string): Promise<number> {
  const { rows } = await sql<{ n: number }>`select count(*)::int as n from generations where team_id = ${teamId}`.execute(db);
  return rows[0]!.n;
}

const tableExists = async (db: Db, table: string): Promise<boolean> =>
  (await sql<{ ok: boolean }>`select to_regclass(${table}) is not null as ok`.execute(db)).rows[0]!.ok;

/** The stored files the team's rows other than generations name (product and avatar images, voiceover audio, uploads, export archives). */
export async function teamFileKeys(db: Db, teamId: string): Promise<string[]> {
  const parts = [
    sql`select image_key as k from products where team_id = ${teamId}`,
    sql`select image_key from avatars where team_id = ${teamId}`,
    sql`select audio_key from voiceovers where team_id = ${teamId}`,
    sql`select archive_key from team_exports where team_id = ${teamId} and archive_key is not null`,
  ];
  if (await tableExists(db, 'uploads')) parts.push(sql`select storage_key from uploads where team_id = ${teamId}`);
  const { rows } = await sql<{ k: string }>`select distinct k from (${sql.join(parts, sql` union all `)}) f`.execute(db);
  return rows.map((r) => r.k);
}

/** Tables of the current schema with a `team_id` column. */
export async function tablesWithTeamId(db: Db): Promise<string[]> {
  const { rows } = await sql<{ table_name: string }>`
    select c.table_name from information_schema.columns c
    join information_schema.tables t on t.table_schema = c.table_schema and t.table_name = c.table_name
    where c.table_schema = current_schema() and c.column_name = 'team_id' and t.table_type = 'BASE TABLE'
    order by c.table_name`.execute(db);
  return rows.map((r) => r.table_name);
}

/**
 * Deletes the team's rows in `table` (a name read from information_schema, quoted as an identifier).
 * Rows hanging off them go by their foreign keys (campaign rows, sessions, sign-in links).
 */
export async function deleteTeamRows(db: Db, table: string, teamId: string): Promise<number> {
  const { numAffectedRows } = await sql`delete from ${sql.table(table)} where team_id = ${teamId}`.execute(db);
  return Number(numAffectedRows ?? 0);
}

/**
 * The ledger's lines stay, but not the email addresses an owner's top-up line quotes in its note:
 * the note keeps the amount, the user id and the limits.
 */
export async function forgetLedgerEmails(db: Db, teamId: string): Promise<number> {
  const { numAffectedRows } = await sql`update credit_ledger set note = regexp_replace(note, ' ?\\([^()]*@[^()]*\\)', '', 'g')
    where team_id = ${teamId} and subject_type = 'user' and note like '%@%'`.execute(db);
  return Number(numAffectedRows ?? 0);
}

/** Webhook attempts recorded under the team's keys (test events have no generation, so no team by that path). */
export async function deleteTeamKeyDeliveries(db: Db, teamId: string): Promise<number> {
  const { numAffectedRows } = await sql`delete from webhook_deliveries where api_key_id in (select id from api_keys where team_id = ${teamId})`.execute(db);
  return Number(numAffectedRows ?? 0);
}

// ---- reads for the export ----

/** The team's generations by id, `limit` at a time (ids, not dates: a Date drops the microseconds a timestamp keeps). */
export async function teamGenerationsAfter(db: Db, teamId: string, afterId: string | null, limit: number): Promise<GenerationRow[]> {
  let q = db.selectFrom('generations').selectAll().where('team_id', '=', teamId);
  if (afterId) q = q.where('id', '>', afterId);
  return q.orderBy('id').limit(limit).execute();
}

/** The ledger oldest first, each line with the credits used after it (the lines GET /account/ledger shows). */
export async function ledgerLinesAfter(db: Db, teamId: string, afterId: number, limit: number): Promise<LedgerLine[]> {
  const { rows } = await sql<LedgerLine>`
    select * from (
      select id::text, kind, amount, subject_type, subject_id, note, created_at, (sum(amount) over (order by id))::int as used_after
      from credit_ledger where team_id = ${teamId}
    ) l where id::bigint > ${afterId} order by id::bigint limit ${limit}`.execute(db);
  return rows;
}

/** The team's uploads with their stored key, when the server has uploads (an empty list otherwise). */
export async function teamUploads(db: Db, teamId: string): Promise<Record<string, unknown>[]> {
  if (!(await tableExists(db, 'uploads'))) return [];
  return (await sql<Record<string, unknown>>`select id, status, content_type, kind, size, created_at, expires_at, storage_key from uploads where team_id = ${teamId} order by created_at, id`.execute(db)).rows;
}

export async function teamRows<T = Record<string, unknown>>(db: Db, query: ReturnType<typeof sql>): Promise<T[]> {
  return (await query.execute(db)).rows as T[];
}

export const teamQueries = {
  products: (teamId: string) => sql`select id, name, description, category, image_key, image_source_url, price, currency, link, created_at from products where team_id = ${teamId} order by created_at, id`,
  brands: (teamId: string) => sql`select * from brands where team_id = ${teamId} order by created_at, id`,
  avatars: (teamId: string) => sql`select id, name, description, gender, age_group, image_key, image_source_url, created_at from avatars where team_id = ${teamId} order by created_at, id`,
  voiceovers: (teamId: string) =>
    sql`select id, kind, voice_id, text, source_url, source_duration_seconds, model, voice_settings, duration_seconds, audio_key, credits, api_key_id, created_at from voiceovers where team_id = ${teamId} order by created_at, id`,
  campaigns: (teamId: string) =>
    sql`select c.id, c.name, c.status, c.api_key_id, c.created_at, c.started_at, c.submitted_at, to_jsonb(n) - 'campaign_id' as counts
      from campaigns c left join campaign_counters n on n.campaign_id = c.id where c.team_id = ${teamId} order by c.created_at, c.id`,
  campaignRows: (campaignId: string) =>
    sql`select row_number, row_key, type, body, credits, state, generation_status, generation_credits, coalesce(generation_id, deleted_generation_id) as generation_id,
        deleted_generation_id is not null as generation_deleted, voiceover_id, error, updated_at
      from campaign_rows where campaign_id = ${campaignId} order by row_number`,
  members: (teamId: string) => sql`select id, email, role, password_hash is not null as active, created_at from users where team_id = ${teamId} order by created_at, id`,
  apiKeys: (teamId: string) =>
    sql`select id, name, key_hint as hint, webhook_url, rate_per_minute, rate_burst, created_at, last_used_at, revoked_at from api_keys where team_id = ${teamId} order by created_at, id`,
  webhookDeliveries: (teamId: string) =>
    sql`select d.id, d.api_key_id, d.generation_id, d.event, d.event_id, d.url, d.attempted_at, d.ok, d.status_code, d.error, d.latency_ms, d.body, d.redelivery_of
      from webhook_deliveries d
      where d.api_key_id in (select id from api_keys where team_id = ${teamId}) or d.generation_id in (select id from generations where team_id = ${teamId})
      order by d.attempted_at, d.id`,
  scrapes: (teamId: string) =>
    sql`select id, meta_page_id, page_url, status, credits, brand_id, ads_count, error, created_at, completed_at from ad_library_scrape_jobs where team_id = ${teamId} order by created_at, id`,
  topUps: (teamId: string) => sql`select id::text, user_id, credits, at from credit_top_ups where team_id = ${teamId} order by id`,
  deletedGenerations: (teamId: string) => sql`select id, operation, type, kind, status, credits, created_at, deleted_at from deleted_generations where team_id = ${teamId} order by deleted_at, id`,
};
