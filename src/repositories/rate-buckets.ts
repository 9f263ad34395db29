import { sql } from 'kysely';
import { prepareHot, type Db } from '../db/pool.ts';
import type { BucketRule } from '../domain/rate-limit.ts';

/**
 * Draws `cost` tokens from a shared token bucket in one statement, on the database's clock: the
 * refill and the take of src/domain/rate-limit.ts takeTokens, done where every API node sees the
 * same bucket. A new bucket starts full; a refused draw takes nothing (it brings the bucket up to
 * date). The row lock of the upsert orders concurrent draws of one key on any node.
 *
 * Its commit does not wait for the WAL to reach disk (synchronous_commit off for this statement's
 * own transaction only: set_config(..., true) ends with it, the pooled session keeps `on`): every
 * API request draws, and waiting for a flush per request cost a second fsync wait beside the
 * create's. What a crash can lose is the last fraction of a second of draws, a few tokens handed
 * back to the keys that drew them; never money, which commits synchronously in other statements.
 */
export async function drawFromBucket(db: Db, bucket: string, rule: BucketRule, cost: number): Promise<{ tokens: number; allowed: boolean; at: number }> {
  // Inside a caller's transaction the setting would make that whole transaction's commit asynchronous.
  if (db.isTransaction) throw new Error('drawFromBucket runs in a transaction of its own, never inside another');
  const burst = sql`${rule.burst}::float8`;
  const perMs = sql`${rule.perMinute / 60_000}::float8`;
  const price = sql`${cost}::float8`;
  // The bucket brought up to date at this draw (never past full; a clock that went back adds nothing).
  const refilled = sql`least(${burst}, b.tokens + greatest(0, excluded.at_ms - b.at_ms) * ${perMs})`;
  const left = sql`case when ${refilled} >= ${price} then ${refilled} - ${price} else ${refilled} end`;
  const query = sql<{ tokens: number; allowed: boolean; at_ms: number }>`
    insert into rate_buckets as b (bucket, tokens, at_ms, allowed, full_at_ms)
    select ${bucket}, case when ${burst} >= ${price} then ${burst} - ${price} else ${burst} end, c.now, ${burst} >= ${price},
           c.now + least(${price}, ${burst}) / ${perMs}
    from (select extract(epoch from clock_timestamp())::float8 * 1000 as now, set_config('synchronous_commit', 'off', true)) c
    on conflict (bucket) do update set
      tokens = ${left},
      allowed = ${refilled} >= ${price},
      at_ms = excluded.at_ms,
      full_at_ms = excluded.at_ms + (${burst} - ${left}) / ${perMs}
    returning tokens, allowed, at_ms`;
  const { rows } = await db.executeQuery(prepareHot('adforge_rate_bucket_draw', query.compile(db)));
  const r = rows[0]!;
  return { tokens: r.tokens, allowed: r.allowed, at: r.at_ms };
}

/** Buckets full again say nothing a missing row would not: forgotten. */
export async function purgeFullBuckets(db: Db): Promise<number> {
  const res = await db.deleteFrom('rate_buckets').where('full_at_ms', '<', sql<number>`extract(epoch from now())::float8 * 1000`).executeTakeFirst();
  return Number(res.numDeletedRows);
}
