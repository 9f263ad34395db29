import type { Db } from '../db/pool.ts';
import type { VoiceRow } from '../db/types.ts';
import type { CatalogueVoice } from '../domain/catalogue/voices.ts';
import type { VoicesQuery } from '../domain/voiceover-inputs.ts';
import { fetchPage, type PageOf } from './fetch-page.ts';

export async function upsertVoices(db: Db, voices: readonly CatalogueVoice[]): Promise<void> {
  if (!voices.length) return;
  const rows = voices.map((v) => ({
    id: v.id,
    name: v.name,
    gender: v.gender,
    age_group: v.age_group,
    accent: v.accent,
    style: v.style,
    engine_voice: JSON.stringify(v.espeak),
  }));
  await db
    .insertInto('voices')
    .values(rows)
    .onConflict((oc) =>
      oc.column('id').doUpdateSet((eb) => ({
        name: eb.ref('excluded.name'),
        gender: eb.ref('excluded.gender'),
        age_group: eb.ref('excluded.age_group'),
        accent: eb.ref('excluded.accent'),
        style: eb.ref('excluded.style'),
        engine_voice: eb.ref('excluded.engine_voice'),
      })),
    )
    .execute();
}

export function listVoices(db: Db, q: VoicesQuery): Promise<PageOf<VoiceRow>> {
  let base = db.selectFrom('voices');
  if (q.gender) base = base.where('gender', '=', q.gender);
  if (q.age_group) base = base.where('age_group', '=', q.age_group);
  if (q.accent) base = base.where('accent', '=', q.accent);
  if (q.style) base = base.where('style', '=', q.style);
  return fetchPage(base, (b) => b.selectAll().orderBy('name').orderBy('id'), q);
}

export function findVoice(db: Db, id: string): Promise<VoiceRow | undefined> {
  return db.selectFrom('voices').selectAll().where('id', '=', id).executeTakeFirst();
}
