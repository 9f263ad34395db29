import pg from 'pg';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createPatientPool } from '../../src/db/patient-pool.ts';
import { cloneTemplateDatabase } from '../support/database.ts';
import { startTcpProxy } from '../support/tcp-proxy.ts';

// graphile-worker's pool reaches PostgreSQL through a hop the test cuts and restores: a connection
// lost under a checked-out client, as when the postmaster is killed between two statements.
let drop: () => Promise<void>;
let proxy: Awaited<ReturnType<typeof startTcpProxy>>;
let proxiedUrl: string;
let pool: pg.Pool | undefined;
const timers: NodeJS.Timeout[] = [];

/** The hop back after `ms`. */
function restoreAfter(ms: number): void {
  timers.push(setTimeout(() => void proxy.restore().catch(() => {}), ms));
}

beforeAll(async () => {
  let url: string;
  ({ url, drop } = await cloneTemplateDatabase());
  const u = new URL(url);
  proxy = await startTcpProxy({ host: u.hostname, port: Number(u.port) });
  u.host = `127.0.0.1:${proxy.port}`;
  proxiedUrl = u.toString();
});
afterEach(async () => {
  for (const t of timers.splice(0)) clearTimeout(t);
  await proxy.restore().catch(() => {});
  await pool?.end().catch(() => {});
  pool = undefined;
});
afterAll(async () => {
  await proxy?.close();
  await drop?.();
});

/** A client checked out, then its connection cut; the hop comes back after `awayMs`. */
async function clientWhoseConnectionIsLost(awayMs: number): Promise<pg.PoolClient> {
  pool = createPatientPool(proxiedUrl, 4);
  const client = await pool.connect();
  expect((await client.query('select 1 as one')).rows).toEqual([{ one: 1 }]);
  await proxy.cut();
  restoreAfter(awayMs);
  // The reset reaches the client before the next statement is sent.
  await sleep(50);
  return client;
}

describe('the patient pool (graphile-worker’s)', () => {
  it('a statement whose connection was lost runs again on a new connection once the database answers', async () => {
    const client = await clientWhoseConnectionIsLost(1200);
    const started = Date.now();
    const res = await client.query('select $1::int + 1 as n, pg_backend_pid() as pid', [41]);
    expect(res.rows[0].n).toBe(42);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    client.release(true);
  });

  it('the same for the query-config form graphile-worker uses', async () => {
    const client = await clientWhoseConnectionIsLost(300);
    const res = await client.query({ text: 'select $1::text as t', values: ['again'] });
    expect(res.rows).toEqual([{ t: 'again' }]);
    client.release(true);
  });

  it('a statement inside a transaction is not run again: the transaction is gone, and so is the statement', async () => {
    pool = createPatientPool(proxiedUrl, 4);
    const client = await pool.connect();
    await client.query('begin');
    await proxy.cut();
    restoreAfter(300);
    await sleep(50);
    await expect(client.query('select 1')).rejects.toThrow(/connection|terminated|not queryable/i);
    client.release(true);
    // After the transaction, a new connection's statements are patient again.
    const next = await pool.connect();
    expect((await next.query('select 2 as two')).rows).toEqual([{ two: 2 }]);
    next.release();
  });

  it('a statement bound to its session (LISTEN) is not moved to another connection', async () => {
    const client = await clientWhoseConnectionIsLost(300);
    await expect(client.query('listen some_channel')).rejects.toThrow(/connection|terminated|not queryable/i);
    client.release(true);
  });

  it('an error of the statement itself is answered at once, never run again', async () => {
    pool = createPatientPool(proxiedUrl, 4);
    const client = await pool.connect();
    const started = Date.now();
    await expect(client.query('select 1 / 0')).rejects.toMatchObject({ code: '22012' });
    expect(Date.now() - started).toBeLessThan(1000);
    client.release();
  });

  it('connect() waits while the database is unreachable and connects once it answers', async () => {
    pool = createPatientPool(proxiedUrl, 4);
    await proxy.cut();
    restoreAfter(800);
    const started = Date.now();
    const client = await pool.connect();
    expect(Date.now() - started).toBeGreaterThanOrEqual(700);
    expect((await client.query('select 3 as three')).rows).toEqual([{ three: 3 }]);
    client.release();
  });

  it('ending the pool ends a wait: a statement waiting for the database fails instead of waiting forever', async () => {
    const client = await clientWhoseConnectionIsLost(60_000);
    const waiting = client.query('select 1');
    await sleep(400);
    client.release(true);
    const ending = pool!.end();
    pool = undefined;
    const started = Date.now();
    await expect(waiting).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(6_000);
    await ending;
  });
});
