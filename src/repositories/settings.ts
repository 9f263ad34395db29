import type { Db } from '../db/pool.ts';

/** Stores `proposed` unless a value exists; either way returns the value every process now shares. */
export async function settingOnce(db: Db, name: string, proposed: string): Promise<string> {
  await db.insertInto('settings').values({ name, value: proposed }).onConflict((oc) => oc.column('name').doNothing()).execute();
  const row = await db.selectFrom('settings').select('value').where('name', '=', name).executeTakeFirstOrThrow();
  return row.value;
}

/** Stores the setting only if it does not exist yet; true for the one caller that stored it. */
export async function claimSetting(db: Db, name: string, value: string): Promise<boolean> {
  const row = await db.insertInto('settings').values({ name, value }).onConflict((oc) => oc.column('name').doNothing()).returning('name').executeTakeFirst();
  return row !== undefined;
}

export async function setSetting(db: Db, name: string, value: string): Promise<void> {
  await db.updateTable('settings').set({ value }).where('name', '=', name).execute();
}
