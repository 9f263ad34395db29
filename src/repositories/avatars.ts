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
