import type { Insertable } from 'kysely';
import type { Db } from '../db/pool.ts';
import type { AvatarRow, AvatarsTable } from '../db/types.ts';

export function listPlatformAvatars(db: Db): Promise<AvatarRow[]> {
  return db.selectFrom('avatars').selectAll().where('avatar_type', '=', 'platform').orderBy('name').execute();
}

export function listCustomAvatars(db: Db, teamId: string): Promise<AvatarRow[]> {
  return db
    .selectFrom('avatars')
    .selectAll()
    .where('avatar_type', '=', 'custom')
    .where('team_id', '=', teamId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
}

export function insertAvatar(db: Db, a: Insertable<AvatarsTable>): Promise<AvatarRow> {
  return db.insertInto('avatars').values(a).returningAll().executeTakeFirstOrThrow();
}

export function upsertPlatformAvatar(db: Db, a: Insertable<AvatarsTable> & { id: string }): Promise<unknown> {
  return db
    .insertInto('avatars')
    .values(a)
    .onConflict((oc) =>
      oc.column('id').doUpdateSet({ name: a.name, gender: a.gender ?? null, age_group: a.age_group ?? null, image_key: a.image_key }),
    )
    .execute();
}

export function deleteCustomAvatar(db: Db, teamId: string, id: string): Promise<AvatarRow | undefined> {
  return db
    .deleteFrom('avatars')
    .where('avatar_type', '=', 'custom')
    .where('team_id', '=', teamId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

/** An avatar of this type: a platform avatar, or (with teamId) one of that team's custom avatars. */
export function findAvatarOfType(db: Db, id: string, type: 'platform' | 'custom', teamId?: string): Promise<AvatarRow | undefined> {
  let q = db.selectFrom('avatars').selectAll().where('id', '=', id).where('avatar_type', '=', type);
  if (teamId !== undefined) q = q.where('team_id', '=', teamId);
  return q.executeTakeFirst();
}

export function findAvatarById(db: Db, id: string): Promise<AvatarRow | undefined> {
  return db.selectFrom('avatars').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Avatars among `ids` that the team sees: every platform avatar and its own custom ones. */
export function findVisibleAvatarsByIds(db: Db, teamId: string, ids: readonly string[]): Promise<AvatarRow[]> {
  if (!ids.length) return Promise.resolve([]);
  return db
    .selectFrom('avatars')
    .selectAll()
    .where('id', 'in', [...ids])
    .where((eb) => eb.or([eb('team_id', 'is', null), eb('team_id', '=', teamId)]))
    .execute();
}
