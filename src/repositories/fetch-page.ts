import type { SelectQueryBuilder } from 'kysely';
import type { Page } from '../domain/inputs.ts';

export interface PageOf<T> {
  rows: T[];
  total: number;
}

/** Runs the page and its total side by side; `base` carries the filters, `order` the stable sort. */
export async function fetchPage<DB, TB extends keyof DB, O>(
  base: SelectQueryBuilder<DB, TB, object>,
  select: (q: SelectQueryBuilder<DB, TB, object>) => SelectQueryBuilder<DB, TB, O>,
  page: Page,
): Promise<PageOf<O>> {
  const [rows, count] = await Promise.all([
    select(base).limit(page.limit).offset(page.offset).execute(),
    base.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number((count as { total: number }).total) };
}
