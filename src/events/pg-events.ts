import pg from 'pg';
import { backendPid, isChannelName, listen, listeningChannels, notify } from '../db/listen.ts';

/**
 * A cross-process event bus on PostgreSQL LISTEN/NOTIFY, for GraphQL subscriptions: graphql-yoga's
 * own pub/sub lives in one process, but generations end in workers and subscribers sit on any API node.
 *
 * - One dedicated pg.Client per bus (never a pool client: a pooled connection would be handed to
 *   other work and its LISTENs would leak or vanish). It LISTENs on a channel while at least one
 *   in-process subscriber wants it and UNLISTENs when the last one leaves.
 * - Payloads are JSON; a payload that does not parse is logged and dropped. One parsed object is
 *   handed to every subscriber of the event: treat it as read-only.
 * - Each subscriber has a bounded queue: when a consumer falls `maxQueue` events behind, the OLDEST
 *   queued event is dropped and counted (`subscription.dropped`). Our payloads are change notices
 *   (ids + status; readers fetch the row fresh), so the newest ones matter most, and a burst must not
 *   end a client's subscription nor let one slow socket grow memory without bound.
 * - When the connection drops (server restart, pg_terminate_backend) the bus reconnects with
 *   exponential backoff and re-LISTENs every active channel before use. Subscriptions survive, but
 *   events NOTIFied while no connection was listening are lost (NOTIFY is not queued for absent
 *   listeners): after an outage, callers that care re-read state rather than rely on the stream.
 * - Delivery is at most once and only for transactions that COMMIT (Postgres's own NOTIFY semantics).
 */

export interface EventBusLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface EventBusOptions {
  connectionString: string;
  log?: EventBusLog;
  /** Events buffered per subscriber before the oldest is dropped. */
  maxQueue?: number;
  /** Reconnect backoff: first delay, doubled per failed attempt up to the max (with jitter). */
  reconnectMinDelayMs?: number;
  reconnectMaxDelayMs?: number;
  /** Each event received, once, before it is handed to subscribers (metrics: the delay since it was sent). */
  onReceived?: (channel: string, payload: unknown) => void;
}

export interface EventSubscription<T> extends AsyncIterableIterator<T> {
  readonly channel: string;
  /** Resolves once the bus LISTENs on the channel (or the subscription has ended): events NOTIFied after it are delivered. */
  readonly ready: Promise<void>;
  /** Events this subscriber lost because it fell `maxQueue` behind. */
  readonly dropped: number;
  /** Ends the subscription at once (queued events are discarded); the UNLISTEN, if it was the last, follows. */
  return(): Promise<IteratorResult<T, undefined>>;
}

export interface EventBus {
  subscribe<T>(channel: string, filter: (payload: unknown) => payload is T): EventSubscription<T>;
  subscribe(channel: string, filter?: (payload: unknown) => boolean): EventSubscription<unknown>;
  /**
   * pg_notify outside any transaction, on the bus's own connection, after any subscribe() made before
   * it on this bus is listening. Waits for a reconnect during an outage. Code inside a transaction
   * must call pg_notify on its transaction instead (see notifyGenerationChanged), so the event
   * commits with the data.
   */
  publish(channel: string, payload: unknown): Promise<void>;
  /** In-process subscriptions open now, on every channel. */
  readonly subscriberCount: number;
  /** The server process id of the listening connection while connected (diagnostics, tests). */
  readonly backendPid: number | undefined;
  /** `pg_listening_channels()` of the bus's own session, after pending LISTEN/UNLISTENs. */
  listeningChannels(): Promise<string[]>;
  /** Ends every subscription and the connection; the bus cannot be used afterwards. */
  close(): Promise<void>;
}

/** Postgres rejects NOTIFY payloads of 8000 bytes or more. */
export const MAX_PAYLOAD_BYTES = 7999;

export function assertChannel(channel: string): void {
  if (!isChannelName(channel)) throw new TypeError(`invalid event channel name: ${JSON.stringify(channel)}`);
}

class BusClosedError extends Error {
  constructor() {
    super('event bus closed');
  }
}

interface Conn {
  client: pg.Client;
  pid: number | undefined;
  /** Channels LISTENed on this session. */
  listened: Set<string>;
  dead: boolean;
}

interface Sub {
  filter: ((payload: unknown) => boolean) | undefined;
  push(payload: unknown): void;
  end(): void;
}

const silent: EventBusLog = { info() {}, warn() {} };

export function createPgEventBus(opts: EventBusOptions): EventBus {
  const log = opts.log ?? silent;
  const maxQueue = Math.max(1, opts.maxQueue ?? 1000);
  const minDelay = opts.reconnectMinDelayMs ?? 250;
  const maxDelay = opts.reconnectMaxDelayMs ?? 10_000;

  const subs = new Map<string, Set<Sub>>();
  let current: Conn | undefined;
  let connecting: Promise<Conn> | undefined;
  let candidate: Conn | undefined;
  let closed = false;
  let closing: Promise<void> | undefined;
  let everConnected = false;
  const sleepers = new Set<() => void>();

  // LISTEN/UNLISTEN/publish run one at a time, in call order, so "subscribe then publish" on one bus
  // is ordered and a quick subscribe/unsubscribe/subscribe cannot leave the session in the wrong state.
  let tail: Promise<unknown> = Promise.resolve();
  function serial<T>(op: () => Promise<T>): Promise<T> {
    const run = tail.then(op);
    tail = run.catch(() => {});
    return run;
  }

  function sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        sleepers.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      sleepers.add(wake);
    });
  }

  function deliver(conn: Conn, msg: pg.Notification): void {
    if (conn.dead || closed) return;
    const listeners = subs.get(msg.channel);
    if (!listeners) return;
    let payload: unknown;
    try {
      payload = JSON.parse(msg.payload ?? '');
    } catch {
      log.warn({ channel: msg.channel, payload: msg.payload?.slice(0, 200) }, 'event bus dropped a payload that is not JSON');
      return;
    }
    opts.onReceived?.(msg.channel, payload);
    for (const sub of [...listeners]) {
      let wanted = true;
      try {
        wanted = sub.filter ? sub.filter(payload) : true;
      } catch (err) {
        log.warn({ err, channel: msg.channel }, 'event bus subscriber filter threw; event skipped for it');
        wanted = false;
      }
      if (wanted) sub.push(payload);
    }
  }

  /** Forgets a connection for good; if it was the live one, reconnects while anyone is subscribed. */
  function lost(conn: Conn, err?: unknown): void {
    if (conn.dead) return;
    conn.dead = true;
    conn.client.end().catch(() => {});
    if (current !== conn) return;
    current = undefined;
    if (closed) return;
    log.warn({ err }, 'event bus lost its connection; reconnecting');
    if (subs.size > 0) connection().catch(() => {});
  }

  async function connectLoop(): Promise<Conn> {
    for (let attempt = 0; ; attempt++) {
      if (closed) throw new BusClosedError();
      const client = new pg.Client({ connectionString: opts.connectionString, keepAlive: true, connectionTimeoutMillis: 10_000 });
      const conn: Conn = { client, pid: undefined, listened: new Set(), dead: false };
      candidate = conn;
      // Without an 'error' listener a dropped idle connection would crash the process.
      client.on('error', (err) => lost(conn, err));
      client.on('end', () => lost(conn));
      client.on('notification', (msg) => deliver(conn, msg));
      try {
        await client.connect();
        conn.pid = await backendPid(client);
        for (const channel of subs.keys()) {
          await listen(client, channel, true);
          conn.listened.add(channel);
        }
        if (closed) throw new BusClosedError();
        if (conn.dead) throw new Error('connection lost while listening');
        current = conn;
        if (everConnected) log.info({ channels: [...conn.listened] }, 'event bus reconnected');
        everConnected = true;
        return conn;
      } catch (err) {
        lost(conn, err);
        if (closed) throw new BusClosedError();
        const delay = Math.min(maxDelay, minDelay * 2 ** Math.min(attempt, 20));
        log.warn({ err, attempt }, 'event bus could not connect; retrying');
        await sleep(delay * (0.5 + Math.random() / 2));
      } finally {
        if (candidate === conn) candidate = undefined;
      }
    }
  }

  function connection(): Promise<Conn> {
    if (closed) return Promise.reject(new BusClosedError());
    if (current && !current.dead) return Promise.resolve(current);
    connecting ??= connectLoop().finally(() => {
      connecting = undefined;
    });
    return connecting;
  }

  /** Brings the session's LISTEN state for a channel in line with whether anyone subscribes to it. */
  async function reconcile(channel: string): Promise<void> {
    while (!closed) {
      const conn = await connection();
      const want = subs.has(channel);
      if (want === conn.listened.has(channel)) return;
      try {
        await listen(conn.client, channel, want);
        if (want) conn.listened.add(channel);
        else conn.listened.delete(channel);
        return;
      } catch (err) {
        // A validated LISTEN only fails when the session is gone: reconnecting re-LISTENs everything.
        lost(conn, err);
      }
    }
  }

  function subscribe(channel: string, filter?: (payload: unknown) => boolean): EventSubscription<unknown> {
    assertChannel(channel);
    if (closed) throw new BusClosedError();
    const queue: unknown[] = [];
    const waiters: Array<(r: IteratorResult<unknown, undefined>) => void> = [];
    let dropped = 0;
    let done = false;

    const sub: Sub = {
      filter,
      push(payload) {
        const waiter = waiters.shift();
        if (waiter) return waiter({ value: payload, done: false });
        if (queue.length >= maxQueue) {
          queue.shift();
          dropped++;
          if (dropped === 1) log.warn({ channel, maxQueue }, 'event bus subscriber is too slow; dropping its oldest events');
        }
        queue.push(payload);
      },
      end() {
        if (done) return;
        done = true;
        queue.length = 0;
        for (const waiter of waiters.splice(0)) waiter({ value: undefined, done: true });
      },
    };

    let set = subs.get(channel);
    if (!set) subs.set(channel, (set = new Set()));
    set.add(sub);
    const ready = serial(() => reconcile(channel)).catch(() => {});

    const iterator: EventSubscription<unknown> = {
      channel,
      ready,
      get dropped() {
        return dropped;
      },
      next() {
        if (queue.length > 0) return Promise.resolve({ value: queue.shift(), done: false });
        if (done) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve) => waiters.push(resolve));
      },
      async return() {
        if (!done) {
          sub.end();
          const set = subs.get(channel);
          set?.delete(sub);
          if (set?.size === 0) subs.delete(channel);
          if (!closed) void serial(() => reconcile(channel)).catch(() => {});
        }
        return { value: undefined, done: true };
      },
      [Symbol.asyncIterator]() {
        return iterator;
      },
    };
    return iterator;
  }

  return {
    subscribe: subscribe as EventBus['subscribe'],

    async publish(channel, payload) {
      assertChannel(channel);
      const text = JSON.stringify(payload);
      if (text === undefined) throw new TypeError('event payload is not JSON-serialisable');
      if (Buffer.byteLength(text) > MAX_PAYLOAD_BYTES) throw new RangeError(`event payload exceeds ${MAX_PAYLOAD_BYTES} bytes`);
      await serial(async () => {
        const conn = await connection();
        await notify(conn.client, channel, text);
      });
    },

    get subscriberCount() {
      let n = 0;
      for (const set of subs.values()) n += set.size;
      return n;
    },

    get backendPid() {
      return current && !current.dead ? current.pid : undefined;
    },

    listeningChannels() {
      return serial(async () => {
        const conn = await connection();
        return (await listeningChannels(conn.client)).sort();
      });
    },

    close() {
      closing ??= (async () => {
        closed = true;
        for (const set of subs.values()) for (const sub of set) sub.end();
        subs.clear();
        for (const wake of [...sleepers]) wake();
        const live = current;
        current = undefined;
        // A connect attempt in flight cannot be aborted through pg's public API (end() waits for the
        // server's goodbye): it is told to end and left to fail on its own, at worst after
        // connectionTimeoutMillis, instead of holding close() hostage to an unreachable server.
        if (candidate) lost(candidate);
        if (live) {
          live.dead = true;
          // Bounded for the same reason: a half-open socket would never answer the goodbye.
          let timer: NodeJS.Timeout | undefined;
          await Promise.race([
            live.client.end().catch(() => {}),
            new Promise<void>((resolve) => (timer = setTimeout(resolve, 2000).unref())),
          ]);
          clearTimeout(timer);
        }
      })();
      return closing;
    },
  };
}
