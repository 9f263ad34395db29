import { sql } from 'kysely';
import type { Db } from '../db/pool.ts';

const ms = (n: number) => sql`(${n}::double precision * interval '1 millisecond')`;

/**
 * A place in the line of a provider's reads, taken in one statement on the provider's one row:
 * the slot is greatest(next_at, now(), paused_until) and next_at moves on by `spacingMs`, so the
 * looks waiting on one provider are spread one spacing apart whoever queues them. `waitMs`: how
 * far ahead of the database's clock the slot is (0: now).
 */
export async function takePollSlot(db: Db, provider: string, spacingMs: number): Promise<{ waitMs: number }> {
  const { rows } = await sql<{ wait_ms: number }>`
    insert into upstream_poll_budgets as b (provider, next_at) values (${provider}, now() + ${ms(spacingMs)})
    on conflict (provider) do update set next_at = greatest(b.next_at, now(), b.paused_until) + ${ms(spacingMs)}
    returning greatest(0, extract(epoch from (b.next_at - ${ms(spacingMs)} - now())) * 1000)::double precision as wait_ms`.execute(db);
  return { waitMs: Math.ceil(rows[0]!.wait_ms) };
}

/**
 * A slot at the line's end, taken only when the line already reaches past `notBeforeMs` from now
 * (the look would be sent to its end anyway when it ran): `waitMs` to it, or null when the line
 * is shorter and the look should take its place when it runs.
 */
export async function takeSlotPast(db: Db, provider: string, spacingMs: number, notBeforeMs: number): Promise<{ waitMs: number } | null> {
  const { rows } = await sql<{ wait_ms: number }>`
    update upstream_poll_budgets set next_at = greatest(next_at, paused_until) + ${ms(spacingMs)}
    where provider = ${provider} and greatest(next_at, paused_until) >= now() + ${ms(notBeforeMs)}
    returning greatest(0, extract(epoch from (next_at - ${ms(spacingMs)} - now())) * 1000)::double precision as wait_ms`.execute(db);
  return rows[0] ? { waitMs: Math.ceil(rows[0].wait_ms) } : null;
}

/**
 * The gate of every read: 0 when this read may go now (the provider's previous read is at least
 * `spacingMs` ago and no 429 pauses it; recorded as its last read in the same statement), else how
 * long until it may.
 */
export async function passReadGate(db: Db, provider: string, spacingMs: number): Promise<number> {
  // A provider's first read may come before any slot was taken (a callback's look): its row is made here.
  const passed = await sql`
    insert into upstream_poll_budgets as b (provider, last_read_at) values (${provider}, now())
    on conflict (provider) do update set last_read_at = now()
    where b.last_read_at <= now() - ${ms(spacingMs)} and b.paused_until <= now()
    returning provider`.execute(db);
  if (passed.rows.length) return 0;
  const { rows } = await sql<{ wait_ms: number }>`
    select greatest(1, extract(epoch from (greatest(last_read_at + ${ms(spacingMs)}, paused_until) - now())) * 1000)::double precision as wait_ms
    from upstream_poll_budgets where provider = ${provider}`.execute(db);
  return Math.ceil(rows[0]?.wait_ms ?? 1);
}

/** The provider answered 429: none of its reads goes before `waitMs` from now (slots already taken wait too). */
export async function pausePolls(db: Db, provider: string, waitMs: number): Promise<void> {
  const until = sql`now() + ${ms(waitMs)}`;
  await sql`
    insert into upstream_poll_budgets as b (provider, next_at, paused_until) values (${provider}, ${until}, ${until})
    on conflict (provider) do update set paused_until = greatest(b.paused_until, excluded.paused_until), next_at = greatest(b.next_at, excluded.next_at)`.execute(db);
}
