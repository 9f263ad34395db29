import type { Db } from '../db/pool.ts';

/** Stores `proposed` unless a value exists; either way returns the value every process now shares. */
export async function settingOnce(db: Db, name: string, proposed: string): Promise<string> {
  await db.insertInto('settings').values({ name, value: proposed }).onConflict((oc) => oc.column('name').doNothing()).execute();
  const row = await db.selectFrom('settings').select('value').where('name', '=', name).executeTakeFirstOrThrow();
  return row.value;
}
