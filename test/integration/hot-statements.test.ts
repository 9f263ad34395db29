import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, createPool, prepareHot, type Db } from '../../src/db/pool.ts';
import { cloneTemplateDatabase } from '../support/database.ts';

let drop: () => Promise<void>;
let pool: pg.Pool;
let db: Db;

beforeAll(async () => {
  let url: string;
  ({ url, drop } = await cloneTemplateDatabase());
  pool = createPool(url, 1);
  db = createDb(pool);
});
afterAll(async () => {
  await db.destroy();
  await drop();
});

const prepared = async () =>
  (await sql<{ name: string; statement: string }>`select name, statement from pg_prepared_statements order by name`.execute(db)).rows;

describe('hot statements', () => {
  it('go as their named statement; another statement of the same length, or a new one, goes unnamed', async () => {
    // Two texts of one length: only the one registered is named.
    const hot = sql<{ n: number }>`select ${1}::int + 1 as n`.compile(db);
    const twin = sql<{ n: number }>`select ${1}::int - 1 as n`.compile(db);
    expect(twin.sql).toHaveLength(hot.sql.length);
    prepareHot('test_hot_plus', hot);
    prepareHot('test_hot_plus', hot);
    // A new string of the same text, as kysely compiles on every call, is still the hot statement.
    const again = sql<{ n: number }>`select ${41}::int + 1 as n`.compile(db);
    expect((await db.executeQuery(again)).rows).toEqual([{ n: 42 }]);
    expect((await db.executeQuery(twin)).rows).toEqual([{ n: 0 }]);
    expect((await db.executeQuery(sql<{ n: number }>`select ${2}::int * 2 as n`.compile(db))).rows).toEqual([{ n: 4 }]);
    expect(await prepared()).toEqual([{ name: 'test_hot_plus', statement: hot.sql }]);
  });
});
