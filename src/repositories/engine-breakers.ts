import { sql } from 'kysely';
import type { Db } from '../db/pool.ts';
import type { EngineBreakerRow } from '../db/types.ts';

/** The breakers of these providers that are open now. */
export function findOpenBreakers(db: Db, providers: readonly string[]): Promise<EngineBreakerRow[]> {
  if (!providers.length) return Promise.resolve([]);
  return db.selectFrom('engine_breakers').selectAll().where('provider', 'in', [...providers]).where('open_until', '>', sql<Date>`now()`).execute();
}

export function listBreakers(db: Db): Promise<EngineBreakerRow[]> {
  return db.selectFrom('engine_breakers').selectAll().orderBy('provider').execute();
}

/**
 * One more consecutive submit failure, counted atomically across workers; the breaker opens
 * (until now + cooldown) when the count reaches the limit, and again on each failure while half-open.
 */
export async function recordSubmitFailure(db: Db, provider: string, error: string, limit: number, cooldownSeconds: number): Promise<EngineBreakerRow> {
  return db
    .insertInto('engine_breakers')
    .values({ provider, consecutive_failures: 1, last_error: error, open_until: limit <= 1 ? sql<Date>`now() + make_interval(secs => ${cooldownSeconds})` : null })
    .onConflict((oc) =>
      oc.column('provider').doUpdateSet({
        consecutive_failures: sql`engine_breakers.consecutive_failures + 1`,
        last_error: error,
        open_until: sql`case when engine_breakers.consecutive_failures + 1 >= ${limit} then now() + make_interval(secs => ${cooldownSeconds}) else engine_breakers.open_until end`,
        updated_at: sql`now()`,
      }),
    )
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** A provider that accepted a job is healthy again: the count restarts and the breaker closes. */
export async function recordSubmitSuccess(db: Db, provider: string): Promise<void> {
  await db
    .updateTable('engine_breakers')
    .set({ consecutive_failures: 0, open_until: null, updated_at: sql`now()` })
    .where('provider', '=', provider)
    .where((eb) => eb.or([eb('consecutive_failures', '>', 0), eb('open_until', 'is not', null)]))
    .execute();
}

/** Jobs each provider holds now (submitting or submitted), for operators. */
export async function inFlightByProvider(db: Db): Promise<Record<string, number>> {
  const rows = await db
    .selectFrom('upstream_jobs')
    .select(['provider', (eb) => eb.fn.countAll<string>().as('n')])
    .where('state', 'in', ['submitting', 'submitted'])
    .groupBy('provider')
    .execute();
  return Object.fromEntries(rows.map((r) => [r.provider, Number(r.n)]));
}
