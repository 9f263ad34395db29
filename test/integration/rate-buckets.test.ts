import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, createPool, type Db } from '../../src/db/pool.ts';
import { takeTokens, type BucketState } from '../../src/domain/rate-limit.ts';
import { drawFromBucket, purgeFullBuckets } from '../../src/repositories/rate-buckets.ts';
import { createRateLimiter } from '../../src/services/rate-limiter.ts';
import { cloneTemplateDatabase } from '../support/database.ts';

let drop: () => Promise<void>;
let pool: pg.Pool;
let db: Db;

beforeAll(async () => {
  let url: string;
  ({ url, drop } = await cloneTemplateDatabase());
  pool = createPool(url, 12);
  db = createDb(pool);
});
afterAll(async () => {
  await db.destroy();
  await drop();
});

// A fixed pseudo-random sequence: the same draws on every run.
function* lcg(seed: number) {
  for (let x = seed; ; ) yield (x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
}

describe('the shared token bucket (RATE_LIMIT_STORE=postgres)', () => {
  it('draws exactly as the domain takeTokens does, refills included, on the database clock', async () => {
    for (const rule of [
      { perMinute: 60, burst: 10 },
      { perMinute: 600_000, burst: 7 }, // ten tokens a millisecond: refills between draws
      { perMinute: 1, burst: 3 },
    ]) {
      const random = lcg(rule.burst);
      let state: BucketState | undefined;
      for (let i = 0; i < 60; i++) {
        const cost = [1, 1, 5, 2, 12][Math.floor(random.next().value! * 5)]!;
        const drawn = await drawFromBucket(db, `agree-${rule.perMinute}`, rule, cost);
        const expected = takeTokens(rule, state, cost, drawn.at);
        expect(drawn.allowed, `draw ${i} of ${cost} (rule ${JSON.stringify(rule)})`).toBe(expected.allowed);
        expect(drawn.tokens).toBeCloseTo(expected.state.tokens, 6);
        state = expected.state;
      }
    }
  });

  it("commits without waiting for the WAL flush only for itself: the pooled session keeps synchronous_commit on, and a caller's transaction is refused", async () => {
    const one = createPool(pool.options.connectionString!, 1);
    const oneDb = createDb(one);
    try {
      const show = async () => (await sql<{ synchronous_commit: string }>`show synchronous_commit`.execute(oneDb)).rows[0]!.synchronous_commit;
      expect(await show()).toBe('on');
      await drawFromBucket(oneDb, 'session', { perMinute: 60, burst: 10 }, 1);
      expect(await show()).toBe('on');
      await expect(oneDb.transaction().execute((trx) => drawFromBucket(trx, 'session', { perMinute: 60, burst: 10 }, 1))).rejects.toThrow(/transaction of its own/);
    } finally {
      await oneDb.destroy();
    }
  });

  it('under 60 concurrent draws holds its burst exactly: no more pass than it holds', async () => {
    const rule = { perMinute: 1, burst: 100 };
    const draws = await Promise.all(Array.from({ length: 60 }, () => drawFromBucket(db, 'concurrent', rule, 5)));
    expect(draws.filter((d) => d.allowed)).toHaveLength(20);
  });

  it('the limiter answers from it with the same headers as a bucket in memory', async () => {
    const rule = { perMinute: 60, burst: 10 };
    const shared = createRateLimiter({ store: 'postgres', db });
    const local = createRateLimiter({ store: 'memory' });
    for (let i = 0; i < 4; i++) {
      const [a, b] = [await shared.draw('headers', rule, 5), await local.draw('headers', rule, 5)];
      expect(a.headers['RateLimit-Remaining']).toBe(b.headers['RateLimit-Remaining']);
      expect(a.headers['RateLimit-Limit']).toBe(b.headers['RateLimit-Limit']);
      expect(a.refusal?.code).toBe(b.refusal?.code);
    }
  });

  it('a bucket full again is forgotten by the purge; one still refilling is kept', async () => {
    await drawFromBucket(db, 'refills-fast', { perMinute: 6_000_000, burst: 2 }, 1); // full again within a millisecond
    await drawFromBucket(db, 'refills-slow', { perMinute: 1, burst: 2 }, 1);
    await new Promise((r) => setTimeout(r, 20));
    await purgeFullBuckets(db);
    const left = await db.selectFrom('rate_buckets').select('bucket').where('bucket', 'in', ['refills-fast', 'refills-slow']).execute();
    expect(left.map((r) => r.bucket)).toEqual(['refills-slow']);
  });
});
