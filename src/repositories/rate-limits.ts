import { sql } from 'kysely';
import type { Db } from '../db/pool.ts';
import { decide, type RateLimitDecision, type RateLimitRule } from '../domain/rate-limit.ts';

/**
 * Counts one request against `rule` for the team, inside the caller's transaction: a transaction
 * lock per team and scope orders concurrent requests (on any API node), the database clock is the
 * one clock, and a refused request records nothing. A hit rolled back with its transaction (a 400,
 * a 402) does not count either.
 */
export async function takeRateLimitSlot(trx: Db, teamId: string, rule: RateLimitRule): Promise<RateLimitDecision> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`rate:${rule.scope}:${teamId}`}, 0))`.execute(trx);
  // One reading of the clock for both the window and the decision (clock_timestamp() changes
  // between calls, even within a statement).
  const { rows } = await sql<{ now: Date; hits: Date[] | null }>`
    with clock as (select clock_timestamp() as now)
    select clock.now,
      (select array_agg(at) from rate_limit_hits
        where team_id = ${teamId} and scope = ${rule.scope}
          and at > clock.now - make_interval(secs => ${rule.windowSeconds})) as hits
    from clock`.execute(trx);
  const now = rows[0]!.now;
  const decision = decide(rule, (rows[0]!.hits ?? []).map((d) => new Date(d).getTime()), now.getTime());
  if (decision.allowed) await trx.insertInto('rate_limit_hits').values({ team_id: teamId, scope: rule.scope, at: now }).execute();
  return decision;
}

export async function purgeRateLimitHits(db: Db, olderThanSeconds = 3600): Promise<number> {
  const res = await db.deleteFrom('rate_limit_hits').where('at', '<', sql<Date>`now() - make_interval(secs => ${olderThanSeconds})`).executeTakeFirst();
  return Number(res.numDeletedRows);
}
