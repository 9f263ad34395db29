import type { TestService } from './app.ts';

export interface DashboardSession {
  cookie: string;
  csrf: string;
  email: string;
  password: string;
  /** GraphQL as the dashboard sends it: the session cookie and its CSRF token. */
  gql: (query: string, variables?: Record<string, unknown>, opts?: { csrf?: string | null }) => Promise<{ status: number; body: any }>;
}

export const cookieOf = (setCookie: string | string[] | undefined): string => {
  const first = Array.isArray(setCookie) ? setCookie[0] : setCookie;
  if (!first) throw new Error('no Set-Cookie');
  return first.split(';')[0]!;
};

export function dashboardGql(svc: TestService, cookie: string, csrf: string): DashboardSession['gql'] {
  return async (query, variables = {}, opts = {}) => {
    const headers: Record<string, string> = { cookie };
    const token = opts.csrf === undefined ? csrf : opts.csrf;
    if (token !== null) headers['x-csrf-token'] = token;
    const res = await svc.api('POST', '/graphql', { body: { query, variables }, headers });
    return { status: res.status, body: res.body };
  };
}

/** A person of the team, signed in through their one-time link as a browser would. */
export async function signedInUser(svc: TestService, teamId: string, role: 'owner' | 'member', email = `${role}-${Math.random().toString(36).slice(2)}@example.com`): Promise<DashboardSession> {
  const link = await svc.app.services.members.createUser(teamId, { email, role });
  const token = new URL(link.url).hash.slice(1);
  const password = 'correct horse battery';
  const res = await svc.api('POST', '/auth/welcome', { body: { token, password } });
  if (res.status !== 200) throw new Error(`welcome answered ${res.status}: ${res.text}`);
  const cookie = cookieOf(res.headers['set-cookie']);
  return { cookie, csrf: res.body.csrf_token, email, password, gql: dashboardGql(svc, cookie, res.body.csrf_token) };
}
