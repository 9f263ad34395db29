import { builder } from '../builder.ts';

/** Paging like REST: limit 1-100 (default 20), offset >= 0; every page says its total. */
export const pageArgs = (t: any) => ({
  limit: t.arg.int({ required: false }),
  offset: t.arg.int({ required: false }),
});

/** GraphQL ints to the query-string shape the shared zod schema expects. */
export function pageQuery(args: { limit?: unknown; offset?: unknown }): Record<string, string> {
  const q: Record<string, string> = {};
  if (typeof args.limit === 'number') q.limit = String(args.limit);
  if (typeof args.offset === 'number') q.offset = String(args.offset);
  return q;
}

export function pageOf<T>(name: string, item: any) {
  return builder
    .objectRef<{ data: T[]; pagination: { total: number; limit: number; offset: number } }>(name)
    .implement({
      fields: (t) => ({
        items: t.field({ type: [item], resolve: (p) => p.data as any }),
        totalCount: t.int({ resolve: (p) => p.pagination.total }),
        limit: t.int({ resolve: (p) => p.pagination.limit }),
        offset: t.int({ resolve: (p) => p.pagination.offset }),
      }),
    });
}
