import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestService, type TestService } from '../support/app.ts';
import { signedInUser, type DashboardSession } from '../support/dashboard-session.ts';
import { plainRequest } from '../support/plain-http.ts';

// Counts the argon2 work the service does: the service runs in this process, so it imports this mock.
const argon = vi.hoisted(() => ({ hash: 0, verify: 0 }));
vi.mock('@node-rs/argon2', async (importOriginal) => {
  const m = await importOriginal<typeof import('@node-rs/argon2')>();
  return {
    ...m,
    hash: (...a: Parameters<typeof m.hash>) => {
      argon.hash++;
      return m.hash(...a);
    },
    verify: (...a: Parameters<typeof m.verify>) => {
      argon.verify++;
      return m.verify(...a);
    },
  };
});

const statuses = (answers: { status: number }[]) => answers.reduce<Record<number, number>>((n, a) => ({ ...n, [a.status]: (n[a.status] ?? 0) + 1 }), {});

describe('the sign-in door under parallel guesses (issue 26, finding 7)', () => {
  let svc: TestService;
  let user: DashboardSession;
  beforeAll(async () => {
    svc = await startTestService();
    const team = await svc.team();
    user = await signedInUser(svc, team.teamId, 'member');
  });
  afterAll(() => svc?.close());

  it('60 parallel wrong passwords for one address: at most 5 are answered as wrong, the rest 429 before any password is checked', async () => {
    const verifiesBefore = argon.verify;
    const answers = await Promise.all(
      Array.from({ length: 60 }, (_, i) => svc.api('POST', '/auth/sign-in', { body: { email: user.email, password: `wrong password ${i}` } })),
    );
    const n = statuses(answers);
    expect(Object.keys(n).sort()).toEqual(['401', '429']);
    expect(n[401]).toBeLessThanOrEqual(5);
    expect(n[429]).toBeGreaterThanOrEqual(55);
    // Refused guesses cost no argon2 work.
    expect(argon.verify - verifiesBefore).toBeLessThanOrEqual(5);
    for (const a of answers.filter((x) => x.status === 429)) {
      expect(a.body.error.code).toBe('rate_limited');
      expect(Number(a.headers['retry-after'])).toBeGreaterThan(0);
    }
    // The right password is refused too until the window passes.
    expect((await svc.api('POST', '/auth/sign-in', { body: { email: user.email, password: user.password } })).status).toBe(429);
  });

  it('a right password gives its reserved slot back: ten sign-ins in a row all open sessions, and wrong ones still count', async () => {
    const team = await svc.team();
    const other = await signedInUser(svc, team.teamId, 'member');
    for (let i = 0; i < 10; i++) {
      expect((await svc.api('POST', '/auth/sign-in', { body: { email: other.email, password: other.password } })).status).toBe(200);
    }
    const wrong = await svc.api('POST', '/auth/sign-in', { body: { email: other.email, password: 'not the password' } });
    expect(wrong.status).toBe(401);
  });

  it('a flood of random welcome tokens does no argon2 work and is throttled per client', async () => {
    const hashesBefore = argon.hash;
    const answers = await Promise.all(
      Array.from({ length: 60 }, () => svc.api('POST', '/auth/welcome', { body: { token: randomBytes(32).toString('base64url'), password: 'a long enough password' } })),
    );
    const n = statuses(answers);
    expect(Object.keys(n).sort()).toEqual(['401', '429']);
    // 30 failures per client address in 15 minutes, sign-ins and links together (6 were spent above).
    expect(n[401]).toBeLessThanOrEqual(30);
    expect(n[429]).toBeGreaterThanOrEqual(30);
    expect(answers.find((a) => a.status === 401)!.body.error).toEqual({ code: 'unauthorized', message: 'This link has expired or was already used: ask your team owner for a new one' });
    expect(answers.find((a) => a.status === 429)!.body.error.code).toBe('rate_limited');
    expect(argon.hash - hashesBefore).toBe(0);
  });
});

// Issue 26, Low: with TRUST_PROXY=true every X-Forwarded-For hop was trusted, so a client chose the
// address its failed sign-ins were counted against. The test client plays the proxy: it connects
// from 127.0.0.1 and sends what a proxy sends, the client's own X-Forwarded-For with the client's
// real address (203.0.113.7) appended.
describe.each([
  ['true', '203.0.113.7'],
  ['2', '198.51.100.9'],
  ['127.0.0.1, ::1', '203.0.113.7'],
  ['10.0.0.0/8', '127.0.0.1'],
])('TRUST_PROXY=%s', (trust, counted) => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ TRUST_PROXY: trust });
  });
  afterAll(() => svc?.close());

  it(`counts failed sign-ins against ${counted}, whatever the client puts in front of X-Forwarded-For`, async () => {
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        svc.api('POST', '/auth/sign-in', {
          body: { email: `guess-${i}@example.com`, password: 'a wrong password' },
          headers: { 'x-forwarded-for': `10.${i}.0.1, 198.51.100.9, 203.0.113.7` },
        }),
      ),
    );
    const n = statuses(answers);
    expect(n[401]).toBeLessThanOrEqual(30);
    expect(n[429]).toBeGreaterThanOrEqual(10);
    const ips = await svc.app.db.selectFrom('sign_in_failures').select('ip').distinct().execute();
    expect(ips.map((r) => r.ip)).toEqual([counted]);
  });

  it('takes X-Forwarded-Proto on plain HTTP only from a peer it trusts', async () => {
    const res = await plainRequest(svc.port, 'GET', '/healthz', { 'x-forwarded-proto': 'https' });
    expect(res.status).toBe(trust === '10.0.0.0/8' ? 403 : 200);
  });
});
