import type { Db } from '../db/pool.ts';
import type { UserRow } from '../db/types.ts';

export function insertUser(db: Db, u: { team_id: string; email: string; role: UserRow['role'] }): Promise<UserRow> {
  return db.insertInto('users').values(u).returningAll().executeTakeFirstOrThrow();
}

export function findUserByEmail(db: Db, email: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('email', '=', email).executeTakeFirst();
}

export function findTeamUser(db: Db, teamId: string, id: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('team_id', '=', teamId).where('id', '=', id).executeTakeFirst();
}

export function listTeamUsers(db: Db, teamId: string): Promise<UserRow[]> {
  return db.selectFrom('users').selectAll().where('team_id', '=', teamId).orderBy('created_at').orderBy('id').execute();
}

export function setPasswordHash(db: Db, id: string, hash: string): Promise<UserRow | undefined> {
  return db.updateTable('users').set({ password_hash: hash }).where('id', '=', id).returningAll().executeTakeFirst();
}

export function setUserRole(db: Db, id: string, role: UserRow['role']): Promise<UserRow | undefined> {
  return db.updateTable('users').set({ role }).where('id', '=', id).returningAll().executeTakeFirst();
}

export function deleteUser(db: Db, id: string): Promise<UserRow | undefined> {
  return db.deleteFrom('users').where('id', '=', id).returningAll().executeTakeFirst();
}

/** Owners of a team, locked: the last owner is never removed or demoted by two requests at once. */
export async function lockOwners(db: Db, teamId: string): Promise<string[]> {
  const rows = await db.selectFrom('users').select('id').where('team_id', '=', teamId).where('role', '=', 'owner').forUpdate().execute();
  return rows.map((r) => r.id);
}

export function findUserTeam(db: Db, userId: string): Promise<{ name: string; tier: 'free' | 'starter' | 'pro' | 'business' }> {
  return db.selectFrom('users').innerJoin('teams', 'teams.id', 'users.team_id').select(['teams.name', 'teams.tier']).where('users.id', '=', userId).executeTakeFirstOrThrow();
}
