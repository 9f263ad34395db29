import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/app.ts';
import { cookieOf, dashboardGql, signedInUser, type DashboardSession } from '../support/dashboard-session.ts';
import { graphqlClient } from '../support/graphql-client.ts';

let svc: TestService;
let team: Awaited<ReturnType<TestService['team']>>;
let owner: DashboardSession;
beforeAll(async () => {
  svc = await startTestService();
  team = await svc.team();
  owner = await signedInUser(svc, team.teamId, 'owner');
});
afterAll(() => svc?.close());

const VIEWER = '{ viewer { email role team_id } }';

describe('one-time links and sign-in', () => {
  it('a link opens a session once, sets the password, and the cookie is HttpOnly, Secure, SameSite=Lax', async () => {
    const link = await svc.app.services.members.createUser(team.teamId, { email: 'New.Person@Example.com', role: 'member' });
    expect(link.url).toMatch(new RegExp(`^${svc.baseUrl}/welcome#[A-Za-z0-9_-]{43}$`));
    expect(link.user).toMatchObject({ email: 'new.person@example.com', role: 'member', active: false });
    const token = new URL(link.url).hash.slice(1);
    const short = await svc.api('POST', '/auth/welcome', { body: { token, password: 'short' } });
    expect(short.status).toBe(400);
    expect(short.body.error).toEqual({ code: 'validation_error', message: 'password: must be at least 10 characters' });
    const res = await svc.api('POST', '/auth/welcome', { body: { token, password: 'a long enough password' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ user: { email: 'new.person@example.com', role: 'member' }, team: { id: team.teamId } });
    const setCookie = String(res.headers['set-cookie']);
    // __Host-: the browser keeps it only from a secure origin, for that host alone (no Domain), on Path=/,
    // so a sibling subdomain or a plain-HTTP page cannot plant or shadow it.
    expect(setCookie).toMatch(/^__Host-adforge_session=[A-Za-z0-9_-]{43};/);
    for (const attr of ['HttpOnly', 'Secure', 'SameSite=Lax', 'Path=/']) expect(setCookie).toContain(attr);
    expect(setCookie).not.toMatch(/domain=/i);
    // The same secret under the name without the prefix is no session.
    const secret = /^__Host-adforge_session=([^;]+)/.exec(setCookie)![1]!;
    expect((await svc.api('GET', '/auth/session', { headers: { cookie: `__Host-adforge_session=${secret}` } })).status).toBe(200);
    expect((await svc.api('GET', '/auth/session', { headers: { cookie: `adforge_session=${secret}` } })).status).toBe(401);
    const again = await svc.api('POST', '/auth/welcome', { body: { token, password: 'another long password' } });
    expect(again.status).toBe(401);
    // Sign-in by the chosen password, the address typed in any case.
    const signIn = await svc.api('POST', '/auth/sign-in', { body: { email: 'NEW.person@example.com', password: 'a long enough password' } });
    expect(signIn.status).toBe(200);
    const gql = dashboardGql(svc, cookieOf(signIn.headers['set-cookie']), signIn.body.csrf_token);
    expect((await gql(VIEWER)).body.data.viewer).toEqual({ email: 'new.person@example.com', role: 'member', team_id: team.teamId });
  });

  it('wrong passwords: one message for an unknown address and a wrong password, then 429 with Retry-After even for the right one', async () => {
    const u = await signedInUser(svc, team.teamId, 'member');
    const unknown = await svc.api('POST', '/auth/sign-in', { body: { email: 'nobody@example.com', password: 'whatever it is' } });
    expect(unknown.status).toBe(401);
    for (let i = 0; i < 5; i++) {
      const res = await svc.api('POST', '/auth/sign-in', { body: { email: u.email, password: `wrong password ${i}` } });
      expect(res.status).toBe(401);
      expect(res.body).toEqual(unknown.body);
    }
    const limited = await svc.api('POST', '/auth/sign-in', { body: { email: u.email, password: u.password } });
    expect(limited.status).toBe(429);
    expect(limited.body.error.code).toBe('rate_limited');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(800);
    // Nothing was opened: the limited answer sets no cookie.
    expect(limited.headers['set-cookie']).toBeUndefined();
  });

  it('a sign-in from another site is refused, and a form body is not read', async () => {
    const cross = await svc.api('POST', '/auth/sign-in', { body: { email: owner.email, password: owner.password }, headers: { origin: 'https://evil.example' } });
    expect(cross.status).toBe(403);
    expect(cross.headers['set-cookie']).toBeUndefined();
    const form = await svc.api('POST', '/auth/sign-in', { rawBody: `email=${owner.email}&password=x`, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(form.status).toBe(400);
  });

  it('GET /auth/session answers the signed-in person and their CSRF token; without a cookie 401', async () => {
    const res = await svc.api('GET', '/auth/session', { headers: { cookie: owner.cookie } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ user: { email: owner.email, role: 'owner' }, csrf_token: owner.csrf });
    expect((await svc.api('GET', '/auth/session')).status).toBe(401);
  });
});

describe('two doors, two credentials', () => {
  it('a session cookie is never accepted by /api/v1', async () => {
    const res = await svc.api('GET', '/api/v1/products', { headers: { cookie: owner.cookie } });
    expect(res.status).toBe(401);
  });

  it('an API key cannot use the dashboard: its fields answer forbidden', async () => {
    const g = await graphqlClient(svc);
    try {
      const res = await g.gql('{ apiKeys { id } }', {}, team.key);
      expect(res.body.errors[0].extensions.code).toBe('forbidden');
      const viewer = await g.gql(VIEWER, {}, team.key);
      expect(viewer.body.errors[0].extensions.code).toBe('forbidden');
      // ...while the team-wide fields work with the key as before.
      expect((await g.gql('{ credits { credits_remaining } }', {}, team.key)).body.data.credits.credits_remaining).toBe(1000);
    } finally {
      await g.close();
    }
  });

  it('GraphQL with the cookie but without its CSRF token is refused, with another session\'s token too', async () => {
    const other = await signedInUser(svc, team.teamId, 'member');
    for (const csrf of [null, other.csrf, 'x'.repeat(43)]) {
      const res = await owner.gql(VIEWER, {}, { csrf });
      expect(res.body.errors[0].extensions.code).toBe('forbidden');
      expect(res.body.data).toBeNull();
    }
    expect((await owner.gql(VIEWER)).body.data.viewer.role).toBe('owner');
  });

  it('the session works over graphql-ws only with its CSRF token in connectionParams', async () => {
    const g = await graphqlClient(svc);
    const { createClient } = await import('graphql-ws');
    const { default: WebSocket } = await import('ws');
    const { loadTls } = await import('../../src/http/tls.ts');
    const tls = await loadTls(svc.app.config);
    const connect = (csrfToken: string | undefined) =>
      new Promise<any>((resolve, reject) => {
        class CookieSocket extends WebSocket {
          constructor(address: string, protocols?: string | string[]) {
            super(address, protocols, { ca: tls.cert, headers: { cookie: owner.cookie } });
          }
        }
        const client = createClient({ url: g.url.replace(/^https/, 'wss'), webSocketImpl: CookieSocket, connectionParams: csrfToken ? { csrfToken } : {}, retryAttempts: 0, lazy: true });
        let result: unknown;
        client.subscribe({ query: VIEWER }, { next: (v) => (result = v), error: (e) => { void client.dispose(); reject(e); }, complete: () => { void client.dispose(); resolve(result); } });
      });
    try {
      expect((await connect(owner.csrf)).data.viewer.email).toBe(owner.email);
      await expect(connect(undefined)).rejects.toBeTruthy();
    } finally {
      await g.close();
    }
  });
});

describe('members and owners', () => {
  it('a member creates and views but cannot manage keys or members', async () => {
    const member = await signedInUser(svc, team.teamId, 'member');
    expect((await member.gql('{ apiKeys { id } }')).body.errors[0].extensions.code).toBe('forbidden');
    const invite = await member.gql('mutation { inviteMember(email: "x@example.com", role: member) { __typename ... on AppError { code message } } }');
    expect(invite.body.data.inviteMember).toEqual({ __typename: 'AppError', code: 'forbidden', message: 'Only a team owner can do this' });
    const members = await member.gql('{ members { email role active } }');
    expect(members.body.data.members).toEqual(expect.arrayContaining([{ email: owner.email, role: 'owner', active: true }]));
    expect((await member.gql('{ credits { credits_remaining } }')).body.data.credits.credits_remaining).toBeGreaterThan(0);
  });

  it('an owner invites with a one-time link, changes a role, and cannot leave the team without an owner', async () => {
    const t = await svc.team();
    const o = await signedInUser(svc, t.teamId, 'owner');
    const inv = await o.gql('mutation { inviteMember(email: "invitee@example.com", role: member) { __typename ... on MutationInviteMemberSuccess { data { url member { id email role active } } } } }');
    const { url, member } = inv.body.data.inviteMember.data;
    expect(member).toMatchObject({ email: 'invitee@example.com', role: 'member', active: false });
    const joined = await svc.api('POST', '/auth/welcome', { body: { token: new URL(url).hash.slice(1), password: 'invitee password' } });
    expect(joined.body.team.id).toBe(t.teamId);
    const dup = await o.gql('mutation { inviteMember(email: "INVITEE@example.com", role: owner) { __typename ... on AppError { code } } }');
    expect(dup.body.data.inviteMember).toEqual({ __typename: 'AppError', code: 'conflict' });
    const me = (await o.gql('{ members { id email } }')).body.data.members.find((m: any) => m.email === o.email);
    for (const m of ['mutation($id: ID!) { setMemberRole(id: $id, role: member) { __typename ... on AppError { code message } } }', 'mutation($id: ID!) { removeMember(id: $id) { __typename ... on AppError { code message } } }']) {
      const res = await o.gql(m, { id: me.id });
      expect(Object.values(res.body.data)[0]).toEqual({ __typename: 'AppError', code: 'conflict', message: 'The team needs at least one owner' });
    }
    const promoted = await o.gql('mutation($id: ID!) { setMemberRole(id: $id, role: owner) { __typename } }', { id: member.id });
    expect(promoted.body.data.setMemberRole.__typename).toBe('MutationSetMemberRoleSuccess');
    // Another team's member is not found.
    const stranger = (await owner.gql('{ members { id } }')).body.data.members[0].id;
    const res = await o.gql('mutation($id: ID!) { removeMember(id: $id) { __typename ... on AppError { code } } }', { id: stranger });
    expect(res.body.data.removeMember).toEqual({ __typename: 'AppError', code: 'not_found' });
  });
});

describe('sign-out', () => {
  it('signs out one session; sign-out everywhere ends every session of the person', async () => {
    const u = await signedInUser(svc, team.teamId, 'member');
    const second = await svc.api('POST', '/auth/sign-in', { body: { email: u.email, password: u.password } });
    const secondGql = dashboardGql(svc, cookieOf(second.headers['set-cookie']), second.body.csrf_token);
    const third = await svc.api('POST', '/auth/sign-in', { body: { email: u.email, password: u.password } });
    const thirdCookie = cookieOf(third.headers['set-cookie']);

    const noToken = await svc.api('POST', '/auth/sign-out', { headers: { cookie: thirdCookie } });
    expect(noToken.status).toBe(403);
    const out = await svc.api('POST', '/auth/sign-out', { headers: { cookie: thirdCookie, 'x-csrf-token': third.body.csrf_token } });
    expect(out.status).toBe(204);
    expect(String(out.headers['set-cookie'])).toMatch(/^__Host-adforge_session=; Max-Age=0/);
    expect((await svc.api('GET', '/auth/session', { headers: { cookie: thirdCookie } })).status).toBe(401);
    expect((await secondGql(VIEWER)).body.data.viewer.email).toBe(u.email);

    const everywhere = await svc.api('POST', '/auth/sign-out-everywhere', { headers: { cookie: u.cookie, 'x-csrf-token': u.csrf } });
    expect(everywhere.body).toEqual({ sessions_ended: 2 });
    expect((await secondGql(VIEWER)).body.errors[0].extensions.code).toBe('unauthorized');
    expect((await u.gql(VIEWER)).body.errors[0].extensions.code).toBe('unauthorized');
  });
});
