import type { Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/app.ts';
import { graphqlClient } from '../support/graphql-client.ts';

// Small caps, so a test reaches them with a handful of subscriptions.
let svc: TestService;
let client: Awaited<ReturnType<typeof graphqlClient>>;
beforeAll(async () => {
  svc = await startTestService({ SUBSCRIPTIONS_PER_CONNECTION: '3', SUBSCRIPTIONS_PER_KEY: '5', SUBSCRIPTIONS_PER_TEAM: '7' });
  client = await graphqlClient(svc);
});
afterAll(async () => {
  await client?.close();
  await svc?.close();
});

const SUB = 'subscription { generationsUpdated { id } }';

/**
 * Opens `n` subscriptions on one client, one after another; resolves with the refusals (their
 * errors) once each was either refused or has been open for a while without being refused.
 */
async function openMany(ws: Client, n: number): Promise<Array<{ code: string; message: string }>> {
  const refused: Array<{ code: string; message: string }> = [];
  for (let i = 0; i < n; i++) {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 300);
      ws.subscribe(
        { query: SUB },
        {
          next: (m: any) => {
            if (m.errors) {
              refused.push({ code: m.errors[0].extensions?.code, message: m.errors[0].message });
              clearTimeout(timer);
              resolve();
            }
          },
          error: () => resolve(),
          complete: () => resolve(),
        },
      );
    });
  }
  return refused;
}

describe('subscriptions are capped per connection, key and team (issue 26, finding 4)', () => {
  it('a subscription past the cap of one connection is refused with a clear error; ending one makes room', async () => {
    const t = await svc.team();
    const ws = client.ws(t.key);
    try {
      const refused = await openMany(ws, 4);
      expect(refused).toEqual([{ code: 'rate_limited', message: 'Too many subscriptions: at most 3 subscriptions may be open on one connection; end one first' }]);
    } finally {
      await ws.dispose();
    }
    // The places of a closed connection are free again.
    const again = client.ws(t.key);
    try {
      expect(await openMany(again, 3)).toEqual([]);
    } finally {
      await again.dispose();
    }
  });

  it('per API key across connections, and per team across keys', async () => {
    const t = await svc.team();
    const second = await svc.app.services.teams.createKey(t.teamId);
    const sockets = [client.ws(t.key), client.ws(t.key), client.ws(second.key), client.ws(second.key)];
    try {
      expect(await openMany(sockets[0]!, 3)).toEqual([]);
      expect(await openMany(sockets[1]!, 3)).toEqual([
        { code: 'rate_limited', message: 'Too many subscriptions: at most 5 subscriptions may be open per API key (or signed-in person); end one first' },
      ]);
      expect(await openMany(sockets[2]!, 2)).toEqual([]);
      expect(await openMany(sockets[3]!, 1)).toEqual([{ code: 'rate_limited', message: 'Too many subscriptions: at most 7 subscriptions may be open per team; end one first' }]);
    } finally {
      for (const s of sockets) await s.dispose();
    }
  });

  it('a subscription that fails gives its place back', async () => {
    const t = await svc.team();
    const ws = client.ws(t.key);
    try {
      for (let i = 0; i < 6; i++) {
        // The unknown id ends it with not_found (graphql-ws sends it as an error message).
        const answer = await new Promise<string>((resolve) => {
          ws.subscribe(
            { query: 'subscription ($id: ID!) { generationUpdated(id: $id) { id } }', variables: { id: '00000000-0000-4000-8000-000000000000' } },
            { next: (m: any) => resolve(JSON.stringify(m)), error: (e: any) => resolve(JSON.stringify(e)), complete: () => resolve('complete') },
          );
        });
        expect(answer).toContain('not_found');
      }
      expect(await openMany(ws, 3)).toEqual([]);
    } finally {
      await ws.dispose();
    }
  });

  it('over SSE the key and team caps hold too', async () => {
    const t = await svc.team();
    const open = async () => {
      const res = await client.fetchFn(client.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${t.key}` },
        body: JSON.stringify({ query: SUB }),
      });
      const reader = res.body!.getReader();
      // What the stream says in its first 300 ms: keep-alive comments, or the refusal.
      let first = '';
      const until = Date.now() + 300;
      for (;;) {
        const left = until - Date.now();
        if (left <= 0) break;
        const r = await Promise.race([reader.read(), new Promise<null>((resolve) => setTimeout(() => resolve(null), left))]);
        if (!r || r.done) break;
        first += Buffer.from(r.value).toString();
      }
      return { reader, first };
    };
    const streams = [];
    try {
      for (let i = 0; i < 5; i++) streams.push(await open());
      for (const s of streams) expect(s.first).not.toContain('errors');
      const sixth = await open();
      streams.push(sixth);
      expect(sixth.first).toContain('at most 5 subscriptions may be open per API key');
    } finally {
      for (const s of streams) await s.reader.cancel();
    }
  });
});

describe('subscribing spends rate-limit tokens (issue 26, finding 4)', () => {
  it("each subscribe takes a read's token from the key's bucket, and an empty bucket refuses it", async () => {
    const t = await svc.team();
    await svc.app.services.teams.setRateLimit(t.keyId, { per_minute: 1, burst: 4 });
    const remaining = async () => Number((await client.gql('{ credits { credits_remaining } }', {}, t.key)).headers.get('ratelimit-remaining'));
    const before = await remaining();
    const ws = client.ws(t.key);
    try {
      expect(await openMany(ws, 1)).toEqual([]);
      // The subscribe took one token, the query after it another.
      expect(await remaining()).toBe(before - 2);
      // One token is left: one more subscribe takes it, the next finds the bucket empty.
      const refused = await openMany(ws, 2);
      expect(refused).toHaveLength(1);
      expect(refused[0]!.code).toBe('rate_limited');
      expect(refused[0]!.message).not.toMatch(/Too many subscriptions/);
    } finally {
      await ws.dispose();
    }
  });
});
