import { createClient, type Client } from 'graphql-ws';
import { ApiError, operationBody, readAnswer, websocketUrl } from '../../../src/domain/graphql-client.ts';

// An answer in the spec's error shape, or a GraphQL error with its code, is an ApiError: shown in
// words, never as JSON. It and a mutation's result are read as the campaign CLI reads them.
export { ApiError, unwrap } from '../../../src/domain/graphql-client.ts';

export interface SessionView {
  user: { id: string; email: string; role: 'owner' | 'member' };
  team: { id: string; name: string; tier: string };
  csrf_token: string;
}

let csrfToken: string | null = null;
const onSignedOut = new Set<() => void>();

export const whenSignedOut = (f: () => void): (() => void) => {
  onSignedOut.add(f);
  return () => onSignedOut.delete(f);
};

async function errorOf(res: Response): Promise<ApiError> {
  const retry = Number(res.headers.get('retry-after')) || undefined;
  try {
    const body = (await res.json()) as { error?: { code?: string; message?: string } };
    if (body.error?.message) return new ApiError(body.error.code ?? 'error', body.error.message, retry);
  } catch {
    // not our error shape: fall through to the status
  }
  return new ApiError('error', `The server answered ${res.status}: try again in a moment`, retry);
}

async function authPost(path: string, body?: unknown): Promise<Response> {
  const res = await fetch(path, {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'content-type': 'application/json', ...(csrfToken ? { 'x-csrf-token': csrfToken } : {}) },
    body: JSON.stringify(body ?? {}),
  });
  if (!res.ok) throw await errorOf(res);
  return res;
}

export async function currentSession(): Promise<SessionView | null> {
  const res = await fetch('/auth/session', { credentials: 'same-origin' });
  if (res.status === 401) return null;
  if (!res.ok) throw await errorOf(res);
  const s = (await res.json()) as SessionView;
  csrfToken = s.csrf_token;
  return s;
}

export async function signIn(email: string, password: string): Promise<SessionView> {
  const s = (await (await authPost('/auth/sign-in', { email, password })).json()) as SessionView;
  csrfToken = s.csrf_token;
  return s;
}

export async function followLink(token: string, password: string): Promise<SessionView> {
  const s = (await (await authPost('/auth/welcome', { token, password })).json()) as SessionView;
  csrfToken = s.csrf_token;
  return s;
}

export async function signOut(everywhere = false): Promise<void> {
  await authPost(everywhere ? '/auth/sign-out-everywhere' : '/auth/sign-out');
  forget();
}

function forget(): void {
  csrfToken = null;
  void ws?.dispose();
  ws = null;
  for (const f of onSignedOut) f();
}

/** A query or mutation as the signed-in person: the session cookie and its CSRF token. */
export async function gql<T>(query: string, variables: Record<string, unknown> = {}): Promise<T> {
  const res = await fetch('/graphql', {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'content-type': 'application/json', accept: 'application/json', ...(csrfToken ? { 'x-csrf-token': csrfToken } : {}) },
    body: operationBody(query, variables),
  });
  const body = readAnswer<T>(await res.text().catch(() => ''));
  if (!body) throw new ApiError('error', `The server answered ${res.status}: try again in a moment`);
  const first = body.errors?.[0];
  if (first) {
    const code = first.extensions?.code ?? 'error';
    if (code === 'unauthorized') forget();
    throw new ApiError(code, first.message, Number(res.headers.get('retry-after')) || undefined);
  }
  return body.data as T;
}

/** What the server answers for a stored file: `url` is the `upload:<id>` reference any URL field of the team takes. */
export interface Upload {
  id: string;
  url: string;
  content_type: string;
  size: number;
  expires_at: string;
}

/** A file sent as the signed-in person (POST /auth/uploads: the session cookie and its CSRF token); its type is read from its bytes. */
export async function uploadFile(file: File): Promise<Upload> {
  const res = await fetch('/auth/uploads', {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'content-type': file.type || 'application/octet-stream', ...(csrfToken ? { 'x-csrf-token': csrfToken } : {}) },
    body: file,
  });
  if (!res.ok) {
    const e = await errorOf(res);
    if (e.code === 'unauthorized') forget();
    throw e;
  }
  return (await res.json()) as Upload;
}

let ws: Client | null = null;

/** graphql-ws on the same origin: the browser sends the cookie, connectionParams the CSRF token. */
export function subscribe<T>(query: string, variables: Record<string, unknown>, next: (data: T) => void, onError?: (e: unknown) => void): () => void {
  ws ??= createClient({
    url: websocketUrl(new URL('/graphql', location.href)),
    connectionParams: () => ({ csrfToken }),
    lazy: true,
    retryAttempts: Infinity,
    shouldRetry: () => csrfToken !== null,
  });
  return ws.subscribe<T>(
    { query, variables },
    {
      next: (r) => {
        if (r.data) next(r.data as T);
      },
      error: (e) => onError?.(e),
      complete: () => {},
    },
  );
}
