import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadTls } from '../../src/http/tls.ts';
import { startTestService, type TestService } from '../support/app.ts';
import { signedInUser, type DashboardSession } from '../support/dashboard-session.ts';
import { graphqlClient } from '../support/graphql-client.ts';

let svc: TestService;
let client: Awaited<ReturnType<typeof graphqlClient>>;
let ca: string | Buffer;

beforeAll(async () => {
  svc = await startTestService();
  client = await graphqlClient(svc);
  ca = (await loadTls(svc.app.config)).cert;
});
afterAll(async () => {
  await client?.close();
  await svc?.close();
});

const wsUrl = () => client.url.replace(/^https/, 'wss');

/** A graphql-ws client as the dashboard opens it: the session cookie on the upgrade, its CSRF token in connectionParams. */
function sessionWs(s: DashboardSession): Client {
  class CookieWebSocket extends WebSocket {
    constructor(address: string, protocols?: string | string[]) {
      super(address, protocols, { ca, headers: { cookie: s.cookie } });
    }
  }
  return createClient({ url: wsUrl(), webSocketImpl: CookieWebSocket, connectionParams: { csrfToken: s.csrf }, retryAttempts: 0, lazy: true });
}

interface Watched {
  ids: Array<{ id: string; at: number }>;
  /** When the subscription ended (error or complete), and how. */
  ended: Promise<{ at: number; how: string }>;
}

/** `generationsUpdated` on a client; resolves once an event has come through, so the subscription is surely live. */
async function watchTeam(ws: Client, makeOne: () => Promise<string>): Promise<Watched> {
  const ids: Watched['ids'] = [];
  let first: () => void;
  const live = new Promise<void>((r) => (first = r));
  const ended = new Promise<{ at: number; how: string }>((resolve) => {
    ws.subscribe(
      { query: 'subscription { generationsUpdated { id status } }' },
      {
        next: (m: any) => {
          if (m.data?.generationsUpdated) ids.push({ id: m.data.generationsUpdated.id, at: Date.now() });
          first();
        },
        error: (e: any) => resolve({ at: Date.now(), how: `error ${e?.code ?? ''} ${e?.reason ?? e?.message ?? JSON.stringify(e)}` }),
        complete: () => resolve({ at: Date.now(), how: 'complete' }),
      },
    );
  });
  // The bus LISTENs asynchronously: keep making generations until one arrives.
  for (let i = 0; i < 50; i++) {
    await makeOne();
    const got = await Promise.race([live.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 200))]);
    if (got) return { ids, ended };
  }
  throw new Error('the subscription never received an event');
}

const makeImage = (key: string) => async () => {
  const res = await svc.api('POST', '/api/v1/images/text-to-image', { key, body: { model: 'fast', prompt: 'watched', aspect_ratio: '1:1' } });
  if (res.status !== 202) throw new Error(`create answered ${res.status}: ${res.text}`);
  // No worker runs here: ending it at once is the change every subscriber hears of.
  await svc.app.services.lifecycle.fail(res.body.generation_id, 'ended by the test');
  return res.body.generation_id as string;
};

/** After the credential ended: the subscription ends within a second, and nothing made afterwards reaches it. */
async function expectEndsWithinASecond(w: Watched, endedAt: number, makeAfter: () => Promise<string>): Promise<void> {
  const after = await makeAfter();
  const end = await Promise.race([w.ended, new Promise<null>((r) => setTimeout(() => r(null), 3000))]);
  expect(end, 'the subscription is still open 3 s after its credential ended').not.toBeNull();
  expect(end!.at - endedAt).toBeLessThan(1000);
  // Time for a late event to arrive, if one were coming.
  await new Promise((r) => setTimeout(r, 300));
  expect(w.ids.map((e) => e.id)).not.toContain(after);
  expect(w.ids.filter((e) => e.at > endedAt)).toEqual([]);
}

describe('subscriptions end with their credentials (issue 26, finding 3)', () => {
  it("a revoked key's open graphql-ws subscription ends within a second and receives nothing made after the revocation", async () => {
    const t = await svc.team({ credits: 1000 });
    const other = await svc.app.services.teams.createKey(t.teamId);
    const ws = client.ws(t.key);
    try {
      const w = await watchTeam(ws, makeImage(other.key));
      await svc.app.services.teams.revokeKey(t.keyId);
      const revokedAt = Date.now();
      await expectEndsWithinASecond(w, revokedAt, makeImage(other.key));
      expect((await w.ended).how).toMatch(/4401/);
    } finally {
      await ws.dispose();
    }
  });

  it("a revoked key's open SSE subscription ends within a second", async () => {
    const t = await svc.team({ credits: 1000 });
    const other = await svc.app.services.teams.createKey(t.teamId);
    const res = await client.fetchFn(client.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${t.key}` },
      body: JSON.stringify({ query: 'subscription { generationsUpdated { id status } }' }),
    });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    let text = '';
    const closed = (async () => {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return Date.now();
        text += Buffer.from(value).toString();
      }
    })();
    for (let i = 0; i < 50 && !text.includes('generationsUpdated'); i++) {
      await makeImage(other.key)();
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(text).toContain('generationsUpdated');
    await svc.app.services.teams.revokeKey(t.keyId);
    const revokedAt = Date.now();
    const after = await makeImage(other.key)();
    const at = await Promise.race([closed, new Promise<null>((r) => setTimeout(() => r(null), 3000))]);
    if (at === null) await reader.cancel();
    expect(at, 'the stream is still open 3 s after the revocation').not.toBeNull();
    expect(at! - revokedAt).toBeLessThan(1000);
    expect(text).not.toContain(after);
  });

  it("a signed-out session's subscription ends within a second; sign-out everywhere ends every one of the person's", async () => {
    const t = await svc.team({ credits: 1000 });
    const u = await signedInUser(svc, t.teamId, 'member');
    const ws = sessionWs(u);
    try {
      const w = await watchTeam(ws, makeImage(t.key));
      const out = await svc.api('POST', '/auth/sign-out', { headers: { cookie: u.cookie, 'x-csrf-token': u.csrf } });
      expect(out.status).toBe(204);
      await expectEndsWithinASecond(w, Date.now(), makeImage(t.key));
    } finally {
      await ws.dispose();
    }

    // Two sessions of one person; sign-out everywhere from a third ends both subscriptions.
    const signIn = async () => {
      const res = await svc.api('POST', '/auth/sign-in', { body: { email: u.email, password: u.password } });
      expect(res.status).toBe(200);
      return { ...u, cookie: String(res.headers['set-cookie']).split(';')[0]!, csrf: res.body.csrf_token as string };
    };
    const [s1, s2, s3] = [await signIn(), await signIn(), await signIn()];
    const ws1 = sessionWs(s1);
    const ws2 = sessionWs(s2);
    try {
      const w1 = await watchTeam(ws1, makeImage(t.key));
      const w2 = await watchTeam(ws2, makeImage(t.key));
      const all = await svc.api('POST', '/auth/sign-out-everywhere', { headers: { cookie: s3.cookie, 'x-csrf-token': s3.csrf } });
      expect(all.status).toBe(200);
      const at = Date.now();
      await expectEndsWithinASecond(w1, at, makeImage(t.key));
      await expectEndsWithinASecond(w2, at, makeImage(t.key));
    } finally {
      await ws1.dispose();
      await ws2.dispose();
    }
  });

  it("a removed member's subscription ends within a second; the owner's stays open", async () => {
    const t = await svc.team({ credits: 1000 });
    const owner = await signedInUser(svc, t.teamId, 'owner');
    const member = await signedInUser(svc, t.teamId, 'member');
    const mws = sessionWs(member);
    const ows = sessionWs(owner);
    try {
      const wm = await watchTeam(mws, makeImage(t.key));
      const wo = await watchTeam(ows, makeImage(t.key));
      const id = (await owner.gql('{ members { id email } }')).body.data.members.find((m: any) => m.email === member.email).id;
      const removed = await owner.gql('mutation($id: ID!) { removeMember(id: $id) { __typename } }', { id });
      expect(removed.body.data.removeMember.__typename).toBe('MutationRemoveMemberSuccess');
      const at = Date.now();
      const after = makeImage(t.key);
      await expectEndsWithinASecond(wm, at, after);
      // The owner's credential is untouched: its subscription still runs.
      const still = await makeImage(t.key)();
      for (let i = 0; i < 25 && !wo.ids.some((e) => e.id === still); i++) await new Promise((r) => setTimeout(r, 200));
      expect(wo.ids.map((e) => e.id)).toContain(still);
    } finally {
      await mws.dispose();
      await ows.dispose();
    }
  });
});

/** A raw socket speaking graphql-transport-ws: what arrives and how it closes. */
function rawSocket(): Promise<{ socket: WebSocket; messages: string[]; closed: Promise<{ code: number; reason: string }> }> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(wsUrl(), 'graphql-transport-ws', { ca });
    const messages: string[] = [];
    const closed = new Promise<{ code: number; reason: string }>((r) => socket.on('close', (code, reason) => r({ code, reason: reason.toString() })));
    socket.on('message', (m) => messages.push(m.toString()));
    socket.on('error', () => {});
    socket.once('open', () => resolve({ socket, messages, closed }));
    socket.once('unexpected-response', (_req, res) => reject(new Error(`upgrade answered ${res.statusCode}`)));
  });
}

describe('WebSocket frames and connections before authentication (issue 26, finding 8)', () => {
  it('an 8 MiB frame before connection_init is refused (1009) and not answered', async () => {
    const { socket, messages, closed } = await rawSocket();
    // An oversized frame is the client's doing: it must not write a stack trace to stderr (a flood of them would be cheap).
    const errors = vi.spyOn(console, 'error');
    try {
      socket.send(JSON.stringify({ type: 'connection_init', payload: { pad: 'x'.repeat(8 * 1024 * 1024) } }));
      const end = await Promise.race([closed, new Promise<null>((r) => setTimeout(() => r(null), 5000))]);
      socket.terminate();
      expect(end?.code).toBe(1009);
      expect(messages).toEqual([]);
      expect(errors).not.toHaveBeenCalled();
    } finally {
      errors.mockRestore();
    }
  });

  it('a subscription document of ordinary size still passes', async () => {
    const t = await svc.team({ credits: 1000 });
    const ws = client.ws(t.key);
    try {
      const query = `subscription { generationsUpdated { id status ${'result_url '.repeat(100)} } }`;
      const w = await watchTeam(Object.assign(Object.create(ws), { subscribe: (p: any, s: any) => ws.subscribe({ ...p, query }, s) }), makeImage(t.key));
      expect(w.ids.length).toBeGreaterThan(0);
    } finally {
      await ws.dispose();
    }
  });

  it('unauthenticated connections are limited per client address', async () => {
    const open: WebSocket[] = [];
    try {
      let refused: Error | undefined;
      for (let i = 0; i < 64 && !refused; i++) {
        try {
          open.push((await rawSocket()).socket);
        } catch (e) {
          refused = e as Error;
        }
      }
      expect(refused?.message).toMatch(/upgrade answered 429/);
      expect(open.length).toBeGreaterThan(0);
      expect(open.length).toBeLessThan(64);
    } finally {
      for (const s of open) s.terminate();
    }
  });

  it('a connection that never sends connection_init is closed', async () => {
    const { closed } = await rawSocket();
    const end = await Promise.race([closed, new Promise<null>((r) => setTimeout(() => r(null), 8000))]);
    expect(end?.code).toBe(4408);
  });
});

describe('behind a trusted proxy, the unauthenticated limit counts each forwarded client (issue 26, finding 8)', () => {
  it('one client past the limit is refused while another behind the same proxy still connects', async () => {
    const proxied = await startTestService({ TRUST_PROXY: '1', WS_UNAUTHENTICATED_PER_CLIENT: '3' });
    const url = `${proxied.baseUrl.replace(/^https/, 'wss')}/graphql`;
    const proxiedCa = (await loadTls(proxied.app.config)).cert;
    const from = (client: string) =>
      new Promise<WebSocket>((resolve, reject) => {
        const socket = new WebSocket(url, 'graphql-transport-ws', { ca: proxiedCa, headers: { 'x-forwarded-for': client } });
        socket.on('error', reject);
        socket.once('open', () => resolve(socket));
        socket.once('unexpected-response', (_req, res) => reject(new Error(`upgrade answered ${res.statusCode}`)));
      });
    const open: WebSocket[] = [];
    try {
      for (let i = 0; i < 3; i++) open.push(await from('198.51.100.1'));
      await expect(from('198.51.100.1')).rejects.toThrow(/upgrade answered 429/);
      open.push(await from('198.51.100.2'));
    } finally {
      for (const s of open) s.terminate();
      await proxied.close();
    }
  });
});
