import type { Services } from '../../service-factories.ts';
import { AppError } from '../../domain/errors.ts';
import { REQUEST_COST } from '../../domain/rate-limit.ts';
import { KEY_REVOCATIONS_CHANNEL, SESSION_ENDS_CHANNEL } from '../../events/channels.ts';
import type { EventBus } from '../../events/pg-events.ts';
import type { FastifyReply } from 'fastify';
import type { Credentials, GraphQLAuth } from './caller.ts';

/** How many subscriptions may be open at once on this node: per WebSocket, per key (or person), per team. */
export interface SubscriptionLimits {
  perConnection: number;
  perKey: number;
  perTeam: number;
}

/** A WebSocket's side of a subscription: closing it ends every subscription it carries. */
export interface LiveConnection {
  close(code: number, reason: string): void;
}

interface Lease {
  keyId: string | null;
  userId: string | undefined;
  teamId: string;
  bucket: string;
  connection: LiveConnection | undefined;
  credentials: Credentials;
  /** A re-check of the credential under way: nothing is delivered until it has answered. */
  checking: Promise<void> | undefined;
  ended: boolean;
  stops: Array<() => unknown>;
}

const isKeyNotice = (p: unknown): p is { key_id: string } => typeof (p as { key_id?: unknown } | null)?.key_id === 'string';
const isSessionNotice = (p: unknown): p is { user_id: string } => typeof (p as { user_id?: unknown } | null)?.user_id === 'string';

/** graphql-ws's close code for a connection whose credential is not (or no longer) good: its clients do not retry it. */
export const CREDENTIAL_ENDED_CLOSE = 4401;

/**
 * Every open subscription of this node with the credential that opened it. A subscription is
 * checked at connect and at subscribe; afterwards its key or session can end (a revoked key, a
 * sign-out, a removed member, a new password): each of those NOTIFYs every node, and the
 * subscriptions that hold it are checked again at once, delivering nothing meanwhile, and ended
 * (the WebSocket closed with 4401) when the credential is gone. A sweep re-checks all of them every
 * `sweepMs`, for a notice lost while the event bus reconnected and for sessions that expire.
 * It also holds the caps: a subscription past one is refused before it starts.
 */
export function createLiveSubscriptions(services: Pick<Services, 'keyCache' | 'rateLimiter'>, events: EventBus, authenticate: (c: Credentials) => Promise<GraphQLAuth>, opts: { limits: SubscriptionLimits; sweepMs?: number }) {
  const leases = new Set<Lease>();
  const counts = new Map<unknown, number>();
  const bump = (k: unknown, by: number) => {
    const n = (counts.get(k) ?? 0) + by;
    if (n <= 0) counts.delete(k);
    else counts.set(k, n);
  };
  const keysOf = (l: Lease) => [`key:${l.bucket}`, `team:${l.teamId}`, ...(l.connection ? [l.connection] : [])];

  function end(l: Lease, reason: string): void {
    if (l.ended) return;
    release(l);
    l.ended = true;
    for (const stop of l.stops.splice(0)) void Promise.resolve().then(stop).catch(() => {});
    l.connection?.close(CREDENTIAL_ENDED_CLOSE, reason);
  }

  function release(l: Lease): void {
    if (!leases.delete(l)) return;
    for (const k of keysOf(l)) bump(k, -1);
  }

  /** Checks the credentials of these leases again (one check per distinct credential) and ends those no longer good. */
  function recheck(some: Lease[]): Promise<void> {
    const byCredential = new Map<string, Promise<GraphQLAuth>>();
    const checks = some.map((l) => {
      const check = (async () => {
        const id = JSON.stringify([l.credentials.authorization, l.credentials.cookie, l.credentials.csrfToken]);
        let auth = byCredential.get(id);
        if (!auth) byCredential.set(id, (auth = authenticate(l.credentials)));
        const now = await auth.catch(() => undefined);
        // A database that cannot answer right now is not a revoked credential: the next sweep asks again.
        if (now === undefined) return;
        if ('error' in now) end(l, now.error.code === 'forbidden' ? 'Your access has changed: sign in again' : 'Your API key or session has ended');
        else if (now.principal.teamId !== l.teamId) end(l, 'Your API key or session has ended');
      })();
      const gate = check.finally(() => {
        if (l.checking === gate) l.checking = undefined;
      });
      l.checking = gate;
      return gate;
    });
    return Promise.all(checks).then(() => undefined);
  }

  let stopFollowing: (() => Promise<void>) | undefined;
  let sweep: NodeJS.Timeout | undefined;

  return {
    /** Listens for ended credentials; resolves once listening. */
    async start(): Promise<void> {
      const keys = events.subscribe(KEY_REVOCATIONS_CHANNEL, isKeyNotice);
      const sessions = events.subscribe(SESSION_ENDS_CHANNEL, isSessionNotice);
      void (async () => {
        for await (const { key_id } of keys) {
          // This node's key cache may still hold the key for up to a second: ask the database.
          services.keyCache.forgetKey(key_id);
          void recheck([...leases].filter((l) => l.keyId === key_id));
        }
      })();
      void (async () => {
        for await (const { user_id } of sessions) void recheck([...leases].filter((l) => l.keyId === null && l.userId === user_id));
      })();
      await Promise.all([keys.ready, sessions.ready]);
      sweep = setInterval(() => void recheck([...leases]), opts.sweepMs ?? 30_000).unref();
      stopFollowing = async () => {
        clearInterval(sweep);
        await Promise.all([keys.return(), sessions.return()]);
      };
    },

    async stop(): Promise<void> {
      await stopFollowing?.();
    },

    /** Open subscriptions on this node (metrics, tests). */
    get size(): number {
      return leases.size;
    },

    /**
     * Takes a place for a subscription of this caller, or refuses it (rate_limited) past a cap; then
     * a read's tokens from the caller's bucket, the one REST and GraphQL draw from (an empty bucket
     * refuses it too). `source` is made once both are held; `onEnd` stops what it waits on when the
     * credential ends.
     */
    async open<T>(
      auth: GraphQLAuth,
      credentials: Credentials,
      connection: LiveConnection | undefined,
      reply: FastifyReply | undefined,
      source: (onEnd: (stop: () => unknown) => void) => AsyncIterator<T>,
    ): Promise<AsyncIterableIterator<T>> {
      if ('error' in auth) throw auth.error;
      const l: Lease = {
        keyId: auth.principal.keyId,
        userId: auth.session?.userId,
        teamId: auth.principal.teamId,
        bucket: auth.bucket,
        connection,
        credentials,
        checking: undefined,
        ended: false,
        stops: [],
      };
      const { perConnection, perKey, perTeam } = opts.limits;
      const over =
        connection && (counts.get(connection) ?? 0) >= perConnection ? `at most ${perConnection} subscriptions may be open on one connection`
        : (counts.get(`key:${l.bucket}`) ?? 0) >= perKey ? `at most ${perKey} subscriptions may be open per API key (or signed-in person)`
        : (counts.get(`team:${l.teamId}`) ?? 0) >= perTeam ? `at most ${perTeam} subscriptions may be open per team`
        : undefined;
      if (over) throw new AppError('rate_limited', `Too many subscriptions: ${over}; end one first`);
      leases.add(l);
      for (const k of keysOf(l)) bump(k, 1);
      try {
        const { headers, refusal } = await services.rateLimiter.draw(auth.bucket, auth.rate, REQUEST_COST.read);
        reply?.headers(headers);
        if (refusal) throw new AppError(refusal.code, refusal.message, headers);
      } catch (e) {
        release(l);
        throw e;
      }

      const it = source((stop) => (l.ended ? void stop() : l.stops.push(stop)));
      const done = async (): Promise<IteratorResult<T, undefined>> => {
        release(l);
        await it.return?.();
        return { value: undefined, done: true };
      };
      const guarded: AsyncIterableIterator<T> = {
        async next() {
          if (l.ended) return done();
          let r: IteratorResult<T>;
          try {
            r = await it.next();
          } catch (e) {
            // A subscription that fails (an unknown id, the database away) gives its place back.
            release(l);
            throw e;
          }
          if (r.done) {
            release(l);
            return { value: undefined, done: true };
          }
          await l.checking;
          if (l.ended) return done();
          return r;
        },
        return: done,
        async throw(e: unknown) {
          release(l);
          return (await it.throw?.(e)) ?? { value: undefined, done: true };
        },
        [Symbol.asyncIterator]() {
          return guarded;
        },
      };
      return guarded;
    },
  };
}
export type LiveSubscriptions = ReturnType<typeof createLiveSubscriptions>;
