import type { Db } from '../db/pool.ts';
import type { Page } from '../domain/inputs.ts';
import { fetchPage } from './fetch-page.ts';

export function listStyleTemplates(db: Db, page: Page) {
  return fetchPage(db.selectFrom('style_templates'), (q) => q.select(['id', 'name', 'description', 'prompt', 'background', 'accent']).orderBy('id'), page);
}

export function listCaptionTemplates(db: Db, page: Page) {
  return fetchPage(
    db.selectFrom('caption_templates'),
    (q) => q.select(['id', 'name', 'description', 'font_size', 'color', 'highlight_color', 'position', 'uppercase']).orderBy('id'),
    page,
  );
}

export function findStyleTemplate(db: Db, id: string) {
  return db.selectFrom('style_templates').selectAll().where('id', '=', id).executeTakeFirst();
}

export function findCaptionTemplate(db: Db, id: string) {
  return db.selectFrom('caption_templates').selectAll().where('id', '=', id).executeTakeFirst();
}
