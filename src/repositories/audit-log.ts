import { sql } from 'kysely';
import type { Db } from '../db/pool.ts';

// audit_log is append-only: this file inserts and reads it, and purges it only through the
// database's own audit_log_purge(). No other statement touches the table (test/unit/audit-log-sql.test.ts).

export interface AuditInsert {
  team_id: string;
  action: string;
  detail: Record<string, unknown>;
  actor_kind: 'user' | 'api_key' | 'operator';
  actor_user_id: string | null;
  actor_key_id: string | null;
  actor_name: string | null;
  ip: string | null;
  user_agent: string | null;
}

/** A line as read: what was written, with the person's email and the key's hint and name as they are now. */
export interface AuditRow extends AuditInsert {
  id: string;
  actor_email: string | null;
  actor_key_hint: string | null;
  actor_key_name: string | null;
  created_at: Date;
}

export interface AuditFilter {
  action?: string | undefined;
  actorKind?: 'user' | 'api_key' | 'operator' | undefined;
  /** A user's or a key's id. */
  actorId?: string | undefined;
  since?: Date | undefined;
  until?: Date | undefined;
}

/** One line; the person's email and the key's hint and name are read as they are now, in the same statement. */
export async function insertAuditLine(db: Db, l: AuditInsert): Promise<void> {
  await sql`
    insert into audit_log (team_id, action, detail, actor_kind, actor_user_id, actor_email, actor_key_id, actor_key_hint, actor_key_name, actor_name, ip, user_agent)
    values (
      ${l.team_id}, ${l.action}, ${JSON.stringify(l.detail)}::jsonb, ${l.actor_kind},
      ${l.actor_user_id}::uuid, (select email from users where id = ${l.actor_user_id}::uuid),
      ${l.actor_key_id}::uuid, (select key_hint from api_keys where id = ${l.actor_key_id}::uuid), (select name from api_keys where id = ${l.actor_key_id}::uuid),
      ${l.actor_name}, ${l.ip}, ${l.user_agent}
    )`.execute(db);
}

function where(teamId: string, f: AuditFilter) {
  return sql.join(
    [
      sql`team_id = ${teamId}::uuid`,
      ...(f.action ? [sql`action = ${f.action}`] : []),
      ...(f.actorKind ? [sql`actor_kind = ${f.actorKind}`] : []),
      ...(f.actorId ? [sql`(actor_user_id = ${f.actorId}::uuid or actor_key_id = ${f.actorId}::uuid)`] : []),
      ...(f.since ? [sql`created_at >= ${f.since}`] : []),
      ...(f.until ? [sql`created_at < ${f.until}`] : []),
    ],
    sql` and `,
  );
}

/** Newest first. */
export async function listAuditLines(db: Db, teamId: string, f: AuditFilter, page: { limit: number; offset: number }): Promise<{ rows: AuditRow[]; total: number }> {
  const rows = await sql<AuditRow>`
    select id::text, team_id, action, detail, actor_kind, actor_user_id, actor_email, actor_key_id, actor_key_hint, actor_key_name, actor_name, ip, user_agent, created_at
    from audit_log where ${where(teamId, f)}
    order by audit_log.created_at desc, audit_log.id desc limit ${page.limit} offset ${page.offset}`.execute(db);
  const count = await sql<{ n: string }>`select count(*) as n from audit_log where ${where(teamId, f)}`.execute(db);
  return { rows: rows.rows, total: Number(count.rows[0]!.n) };
}

/** Lines written before `olderThan`, through the one function the table's guard lets delete. */
export async function purgeAuditLines(db: Db, olderThan: Date): Promise<number> {
  const r = await sql<{ n: string }>`select audit_log_purge(${olderThan}) as n`.execute(db);
  return Number(r.rows[0]!.n);
}
