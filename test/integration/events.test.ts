import net from 'node:net';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createDb, createPool, type Db } from '../../src/db/pool.ts';
import { GENERATION_EVENTS_CHANNEL } from '../../src/events/channels.ts';
import { subscribeGenerationEvents, type GenerationEvent } from '../../src/events/generation-events.ts';
import { createPgEventBus, type EventBus, type EventBusOptions, type EventSubscription } from '../../src/events/pg-events.ts';
import { notifyGenerationChanged } from '../../src/repositories/notifications.ts';
import { cloneTemplateDatabase } from '../support/database.ts';
import { freePort } from '../support/net.ts';

let url: string;
let drop: () => Promise<void>;
let pool: pg.Pool;
let db: Db;
const buses: EventBus[] = [];

beforeAll(async () => {
  ({ url, drop } = await cloneTemplateDatabase());
  pool = createPool(url, 2);
  db = createDb(pool);
});
afterEach(async () => {
  await Promise.all(buses.splice(0).map((b) => b.close()));
});
afterAll(async () => {
  await db?.destroy();
  await drop?.();
});

/** Each bus has its own connection: two buses stand in for two processes (API node, worker). */
function bus(opts: Partial<EventBusOptions> = {}): EventBus {
  const b = createPgEventBus({ connectionString: url, reconnectMinDelayMs: 50, reconnectMaxDelayMs: 400, ...opts });
  buses.push(b);
  return b;
}

/** The next event, or a failure after `ms`: a missing event fails the test instead of hanging it. */
async function next<T>(sub: EventSubscription<T>, ms = 3000): Promise<IteratorResult<T, undefined>> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no event on ${sub.channel} within ${ms} ms`)), ms);
  });
  try {
    return (await Promise.race([sub.next(), timeout])) as IteratorResult<T, undefined>;
  } finally {
    clearTimeout(timer);
  }
}

async function nextValue<T>(sub: EventSubscription<T>): Promise<T> {
  const r = await next(sub);
  if (r.done) throw new Error('subscription ended');
  return r.value;
}

const ev = (id: string, team_id = 'team_a', status = 'completed'): GenerationEvent => ({ id, team_id, status });

describe('delivery across connections', () => {
  it('delivers an event published on bus A to every subscriber on bus B, and to A itself', async () => {
    const a = bus();
    const b = bus();
    const s1 = b.subscribe('t_fanout');
    const s2 = b.subscribe('t_fanout');
    const own = a.subscribe('t_fanout');
    await Promise.all([s1.ready, s2.ready, own.ready]);

    await a.publish('t_fanout', { n: 1, nested: { ok: true } });
    expect(await nextValue(s1)).toEqual({ n: 1, nested: { ok: true } });
    expect(await nextValue(s2)).toEqual({ n: 1, nested: { ok: true } });
    expect(await nextValue(own)).toEqual({ n: 1, nested: { ok: true } });
  });

  it('delivers notifyGenerationChanged once its transaction commits, and never when it rolls back', async () => {
    const b = bus();
    const sub = subscribeGenerationEvents(b, { teamId: 'team_a' });
    await sub.ready;

    await expect(
      db.transaction().execute(async (trx) => {
        await notifyGenerationChanged(trx, ev('gen_rolled_back'));
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');
    await db.transaction().execute((trx) => notifyGenerationChanged(trx, ev('gen_committed')));

    // Notices from one session arrive in commit order, so the committed one coming first proves the other never will.
    // It carries when it was sent (the event bus's lag metric reads it).
    expect(await nextValue(sub)).toEqual({ ...ev('gen_committed'), at: expect.any(Number) });
  });

  it('does not deliver before commit: the listener sees the event only after COMMIT', async () => {
    const b = bus();
    const sub = b.subscribe('t_commit');
    await sub.ready;
    const read = sub.next();
    const client = await pool.connect();
    try {
      await client.query('begin');
      await client.query(`select pg_notify('t_commit', '{"step":1}')`);
      const early = await Promise.race([read, new Promise((r) => setTimeout(() => r('none'), 300))]);
      expect(early).toBe('none');
      await client.query('commit');
    } finally {
      client.release();
    }
    // The read raced above was still pending and receives the event.
    expect(await read).toEqual({ value: { step: 1 }, done: false });
  });

  it('logs and drops a payload that is not JSON', async () => {
    const warn = vi.fn();
    const b = bus({ log: { info() {}, warn } });
    const sub = b.subscribe('t_json');
    await sub.ready;
    await pool.query(`select pg_notify('t_json', 'not json {')`);
    await pool.query(`select pg_notify('t_json', '{"fine":true}')`);
    expect(await nextValue(sub)).toEqual({ fine: true });
    expect(warn).toHaveBeenCalledWith(expect.objectContaining({ channel: 't_json' }), expect.stringMatching(/not JSON/));
  });
});

describe('generation events', () => {
  it('filters by team always and by generation id when given', async () => {
    const a = bus();
    const b = bus();
    const team = subscribeGenerationEvents(b, { teamId: 'team_a' });
    const one = subscribeGenerationEvents(b, { teamId: 'team_a', generationId: 'gen_2' });
    const other = subscribeGenerationEvents(b, { teamId: 'team_b' });
    await Promise.all([team.ready, one.ready, other.ready]);

    // Sent as the services send them: notifyGenerationChanged, which stamps when it was sent.
    const notify = (e: GenerationEvent) => notifyGenerationChanged(db, e);
    const received = (...args: Parameters<typeof ev>) => ({ ...ev(...args), at: expect.any(Number) });
    await notify(ev('gen_1'));
    await notify(ev('gen_x', 'team_b'));
    // Same id, other team: a generation-id filter never crosses teams.
    await notify(ev('gen_2', 'team_b'));
    await notify(ev('gen_2', 'team_a', 'failed'));
    await a.publish(GENERATION_EVENTS_CHANNEL, { id: 'gen_malformed' });
    await notify(ev('gen_3'));

    expect(await nextValue(team)).toEqual(received('gen_1'));
    expect(await nextValue(team)).toEqual(received('gen_2', 'team_a', 'failed'));
    expect(await nextValue(team)).toEqual(received('gen_3'));
    expect(await nextValue(one)).toEqual(received('gen_2', 'team_a', 'failed'));
    expect(await nextValue(other)).toEqual(received('gen_x', 'team_b'));
    expect(await nextValue(other)).toEqual(received('gen_2', 'team_b'));
  });
});

describe('subscriptions', () => {
  it('LISTENs while a channel has a subscriber and UNLISTENs when the last one returns', async () => {
    const b = bus();
    const s1 = b.subscribe('t_listen');
    const s2 = b.subscribe('t_listen');
    const other = b.subscribe('t_other');
    await Promise.all([s1.ready, s2.ready, other.ready]);
    expect(await b.listeningChannels()).toEqual(['t_listen', 't_other']);

    await s1.return();
    expect(await b.listeningChannels()).toEqual(['t_listen', 't_other']);
    await s2.return();
    expect(await b.listeningChannels()).toEqual(['t_other']);
    expect(await s2.next()).toEqual({ value: undefined, done: true });

    // A fresh subscriber after the UNLISTEN listens again.
    const again = b.subscribe('t_listen');
    await again.ready;
    expect(await b.listeningChannels()).toEqual(['t_listen', 't_other']);
  });

  it('ends for-await loops on return()', async () => {
    const a = bus();
    const b = bus();
    const sub = b.subscribe('t_loop');
    await sub.ready;
    await a.publish('t_loop', 1);
    await a.publish('t_loop', 2);
    const seen: unknown[] = [];
    for await (const v of sub) {
      seen.push(v);
      if (seen.length === 2) break; // break calls return()
    }
    expect(seen).toEqual([1, 2]);
    expect(await b.listeningChannels()).toEqual([]);
  });

  it('keeps a slow consumer bounded: the oldest events are dropped and counted', async () => {
    const a = bus();
    const b = bus({ maxQueue: 5 });
    const slow = b.subscribe('t_slow');
    const done = b.subscribe('t_slow_done');
    await Promise.all([slow.ready, done.ready]);

    for (let i = 0; i < 20; i++) await a.publish('t_slow', i);
    await a.publish('t_slow_done', true);
    // b's session receives notices in commit order: the marker arriving means all 20 have too.
    expect(await nextValue(done)).toBe(true);

    expect(slow.dropped).toBe(15);
    for (let i = 15; i < 20; i++) expect(await nextValue(slow)).toBe(i);
    expect(done.dropped).toBe(0);
  });

  it('rejects channel names that are not plain lower-case identifiers, and oversized payloads', async () => {
    const b = bus();
    for (const bad of ['', 'Upper', '1abc', 'a-b', 'a"; drop table x; --', 'x'.repeat(64)]) {
      expect(() => b.subscribe(bad)).toThrow(TypeError);
      await expect(b.publish(bad, {})).rejects.toThrow(TypeError);
    }
    await expect(b.publish('t_big', { blob: 'x'.repeat(8000) })).rejects.toThrow(RangeError);
    await expect(b.publish('t_big', undefined)).rejects.toThrow(TypeError);
  });
});

describe('connection loss', () => {
  it('reconnects after the server kills its backend, re-LISTENs and keeps its subscribers', async () => {
    const a = bus();
    const b = bus();
    const sub = b.subscribe('t_kill');
    await sub.ready;
    const pid = b.backendPid;
    expect(pid).toBeTypeOf('number');
    const listening = await pool.query(`select pid from pg_stat_activity where datname = current_database() and query ilike 'LISTEN%'`);
    expect(listening.rows.map((r) => r.pid)).toContain(pid);

    const pending = sub.next(); // a consumer waiting across the outage
    await pool.query('select pg_terminate_backend($1)', [pid]);
    // Until the bus notices, it still reports the old pid; then undefined while reconnecting.
    await vi.waitFor(() => expect(b.backendPid !== undefined && b.backendPid !== pid).toBe(true), { timeout: 5000, interval: 20 });

    await a.publish('t_kill', { after: 'reconnect' });
    expect(await pending).toEqual({ value: { after: 'reconnect' }, done: false });
    expect(await b.listeningChannels()).toEqual(['t_kill']);
  });

  it('keeps retrying with backoff while the server is unreachable, then resumes', async () => {
    const proxy = await tcpProxy(new URL(url));
    try {
      const proxied = new URL(url);
      proxied.hostname = '127.0.0.1';
      proxied.port = String(proxy.port);
      const warn = vi.fn();
      const info = vi.fn();
      const b = bus({ connectionString: proxied.toString(), log: { info, warn } });
      const a = bus();
      const sub = b.subscribe('t_outage');
      await sub.ready;

      await proxy.down(); // "server restart": connections cut, new ones refused
      await vi.waitFor(() => expect(warn.mock.calls.filter(([, m]) => /could not connect/.test(m)).length).toBeGreaterThanOrEqual(2), {
        timeout: 5000,
        interval: 20,
      });
      await a.publish('t_outage', { lost: true }); // nobody listens on b's side: lost, as documented
      await proxy.up();
      await vi.waitFor(() => expect(info).toHaveBeenCalledWith(expect.anything(), 'event bus reconnected'), { timeout: 5000, interval: 20 });

      await a.publish('t_outage', { back: true });
      expect(await nextValue(sub)).toEqual({ back: true });
    } finally {
      await Promise.all(buses.splice(0).map((x) => x.close()));
      await proxy.close();
    }
  });
});

describe('close()', () => {
  it('ends pending and future reads, refuses new work and releases its connection', async () => {
    const b = bus();
    const sub = b.subscribe('t_close');
    await sub.ready;
    const pid = b.backendPid;
    const pending = sub.next();
    await b.close();
    expect(await pending).toEqual({ value: undefined, done: true });
    expect(await sub.next()).toEqual({ value: undefined, done: true });
    expect(() => b.subscribe('t_close')).toThrow(/closed/);
    await expect(b.publish('t_close', {})).rejects.toThrow(/closed/);
    await vi.waitFor(async () => {
      const { rowCount } = await pool.query('select 1 from pg_stat_activity where pid = $1', [pid]);
      expect(rowCount).toBe(0);
    });
  });

  it('returns promptly while the bus is still trying to connect', async () => {
    const port = await freePort();
    const unreachable = new URL(url);
    unreachable.hostname = '127.0.0.1';
    unreachable.port = String(port);
    const b = createPgEventBus({ connectionString: unreachable.toString(), reconnectMinDelayMs: 50 });
    const sub = b.subscribe('t_never');
    await new Promise((r) => setTimeout(r, 200));
    const started = Date.now();
    await b.close();
    expect(Date.now() - started).toBeLessThan(1000);
    await sub.ready; // settles: the subscription ended with the bus
    expect(await sub.next()).toEqual({ value: undefined, done: true });
  });
});

/** A TCP relay to Postgres that can cut every connection and refuse new ones, like a restarting server. */
async function tcpProxy(target: URL) {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => {});
      s.on('close', () => {
        sockets.delete(s);
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  const listen = (port: number) => new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  await listen(0);
  const port = (server.address() as net.AddressInfo).port;
  const down = async () => {
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const s of sockets) s.destroy();
    await closed;
  };
  return { port, down, up: () => listen(port), close: () => (server.listening ? down() : Promise.resolve()) };
}
