import pg from 'pg';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, createPool, type Db } from '../../src/db/pool.ts';
import { lockKey, lockKeys } from '../../src/repositories/idempotency-keys.ts';
import { cloneTemplateDatabase } from '../support/database.ts';

let drop: () => Promise<void>;
let pool: pg.Pool;
let db: Db;
const scope = { teamId: '00000000-0000-4000-8000-000000000001', method: 'POST', path: '/x', key: 'k-1' };

beforeAll(async () => {
  let url: string;
  ({ url, drop } = await cloneTemplateDatabase());
  pool = createPool(url, 3);
  db = createDb(pool);
});
afterAll(async () => {
  await db.destroy();
  await drop();
});

describe("an Idempotency-Key's lock, taken in one statement", () => {
  it('waits at most the given time for a holder, and lifts the limit for the rest of the transaction', async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let holding!: () => void;
    const taken = new Promise<void>((r) => (holding = r));
    const holder = db.transaction().execute(async (trx) => {
      expect(await lockKey(trx, scope, 1000)).toBe(true);
      holding();
      await held;
    });
    await taken;

    const waited = await db.transaction().execute(async (trx) => {
      const t0 = Date.now();
      const got = await lockKey(trx, scope, 300);
      return { got, ms: Date.now() - t0 };
    });
    expect(waited.got).toBe(false);
    expect(waited.ms).toBeGreaterThanOrEqual(250);

    const other = await db.transaction().execute(async (trx) => {
      expect(await lockKey(trx, { ...scope, key: 'k-2' }, 300)).toBe(true);
      // A debit waiting on a busy team row later in this transaction must not time out.
      return (await sql<{ lock_timeout: string }>`show lock_timeout`.execute(trx)).rows[0]!.lock_timeout;
    });
    expect(other).toBe('0');

    release();
    await holder;
    await db.transaction().execute(async (trx) => expect(await lockKey(trx, scope, 300)).toBe(true));
  });

  it('many keys at once (a campaign batch): the same wait limit when one of them is held, lifted after', async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let holding!: () => void;
    const taken = new Promise<void>((r) => (holding = r));
    const holder = db.transaction().execute(async (trx) => {
      expect(await lockKey(trx, { ...scope, key: 'b-7' }, 1000)).toBe(true);
      holding();
      await held;
    });
    await taken;
    const batch = ['b-1', 'b-7', 'b-9'].map((key) => ({ ...scope, key }));
    const waited = await db.transaction().execute(async (trx) => {
      const t0 = Date.now();
      const got = await lockKeys(trx, batch, 300);
      return { got, ms: Date.now() - t0 };
    });
    expect(waited.got).toBe(false);
    expect(waited.ms).toBeGreaterThanOrEqual(250);
    const free = await db.transaction().execute(async (trx) => {
      const got = await lockKeys(trx, [batch[0]!, batch[2]!], 300);
      return { got, limit: (await sql<{ lock_timeout: string }>`show lock_timeout`.execute(trx)).rows[0]!.lock_timeout };
    });
    expect(free).toEqual({ got: true, limit: '0' });
    release();
    await holder;
    await db.transaction().execute(async (trx) => expect(await lockKeys(trx, batch, 300)).toBe(true));
  });
});
