import type { Page } from '../domain/inputs.ts';

export interface Paginated<T> {
  data: T[];
  pagination: { total: number; limit: number; offset: number };
}

export function paginated<T>(data: T[], total: number, page: Page): Paginated<T> {
  return { data, pagination: { total, limit: page.limit, offset: page.offset } };
}
