import fs from 'node:fs/promises';
import tls from 'node:tls';
import { createClient, type Client } from 'graphql-ws';
import { Agent, request } from 'undici';
import WebSocket from 'ws';
import { ApiError, operationBody, readAnswer, websocketUrl } from '../../domain/graphql-client.ts';
import { CliError, EXIT_USAGE } from './errors.ts';

// The client's errors and a mutation's result, as the dashboard's client reads them too.
export { ApiError, unwrap } from '../../domain/graphql-client.ts';

/**
 * The GraphQL endpoint of `--api-url`: the service's base URL (`https://host:8443`), its REST base
 * (`.../api/v1`) or the endpoint itself (`.../graphql`) all name the same endpoint.
 */
export function graphqlEndpoint(apiUrl: string): URL {
  let url: URL;
  try {
    url = new URL(apiUrl);
  } catch {
    throw new CliError(EXIT_USAGE, `--api-url: not a URL: ${apiUrl}`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new CliError(EXIT_USAGE, `--api-url: must be an https:// URL (got ${url.protocol})`);
  let p = url.pathname.replace(/\/+$/, '');
  if (!p.endsWith('/graphql')) p = `${p.replace(/\/api\/v1$/, '')}/graphql`;
  url.pathname = p;
  url.search = '';
  url.hash = '';
  return url;
}

/**
 * The certificate authorities to trust. Without `--ca`, Node's own (its bundled roots plus
 * NODE_EXTRA_CA_CERTS) apply; with it, the PEM file is added to those, since naming a CA
 * replaces the defaults for a connection.
 */
export async function loadCa(caFile: string | undefined): Promise<string[] | undefined> {
  if (!caFile) return undefined;
  let pem: string;
  try {
    pem = await fs.readFile(caFile, 'utf8');
  } catch (e) {
    throw new CliError(EXIT_USAGE, `--ca: cannot read ${caFile}: ${(e as Error).message}`);
  }
  if (!pem.includes('-----BEGIN CERTIFICATE-----')) throw new CliError(EXIT_USAGE, `--ca: ${caFile} holds no PEM certificate`);
  return [...tls.getCACertificates('default'), pem];
}

const CERT_ERRORS = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
]);
const RETRY_STATUS = new Set([429, 502, 503, 504]);
const RETRY_DELAYS_MS = [500, 1000, 2000];
/** How often one operation waits out the key's rate limit (Retry-After) before the run gives up. */
const MAX_RATE_LIMIT_WAITS = 30;

const codeOf = (e: unknown): string | undefined => (e as { code?: string }).code ?? (e as { cause?: { code?: string } }).cause?.code;

/** A network failure worth saying in plain words; certificate problems name the flags that fix them. */
function networkError(endpoint: URL, e: unknown): ApiError {
  const code = codeOf(e) ?? '';
  const detail = (e as { cause?: Error }).cause?.message ?? (e as Error).message;
  if (CERT_ERRORS.has(code)) {
    return new ApiError(
      'tls_error',
      `the certificate of ${endpoint.host} is not trusted (${code}): pass the server's certificate or CA with --ca FILE (PEM) or NODE_EXTRA_CA_CERTS`,
    );
  }
  return new ApiError('network_error', `cannot reach ${endpoint.origin}: ${detail}${code && !detail.includes(code) ? ` (${code})` : ''}`);
}

export interface ApiClient {
  endpoint: URL;
  /** One GraphQL operation over HTTPS; network failures and 5xx gateways are retried a few times, a 429 after its Retry-After. */
  gql: <T>(query: string, variables?: Record<string, unknown>) => Promise<T>;
  /** A graphql-ws subscription on the same URL; returns a function that ends it. */
  subscribe: <T>(
    query: string,
    variables: Record<string, unknown>,
    sink: { next: (data: T) => void; error: (e: Error) => void; complete: () => void },
  ) => () => void;
  close: () => Promise<void>;
}

export function createApiClient(opts: { endpoint: URL; key: string; ca: string[] | undefined }): ApiClient {
  const { endpoint, key, ca } = opts;
  const dispatcher = new Agent({ connect: ca ? { ca } : {} });
  const clients = new Set<Client>();

  async function once<T>(body: string): Promise<{ retry: boolean; result?: T; error?: ApiError; waitMs?: number }> {
    let res: Awaited<ReturnType<typeof request>>;
    try {
      res = await request(endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json', authorization: `Bearer ${key}` },
        body,
        dispatcher,
      });
    } catch (e) {
      const err = networkError(endpoint, e);
      return { retry: err.code !== 'tls_error', error: err };
    }
    const text = await res.body.text();
    // Not JSON: reported below.
    const parsed = readAnswer<T>(text);
    // The key's rate limit: wait as long as the server says, then send the same operation again.
    if (res.statusCode === 429) {
      const seconds = Number(res.headers['retry-after']);
      const error = new ApiError('rate_limited', parsed?.errors?.[0]?.message ?? `${endpoint.href} answered HTTP 429`);
      return { retry: true, error, waitMs: Number.isFinite(seconds) && seconds > 0 ? Math.min(seconds, 60) * 1000 : 1000 };
    }
    if (parsed?.errors?.length) {
      const first = parsed.errors[0]!;
      const code = first.extensions?.code ?? (res.statusCode === 401 ? 'unauthorized' : 'graphql_error');
      const message = code === 'unauthorized' ? `the API key was refused: ${first.message}` : parsed.errors.map((e) => e.message).join('; ');
      return { retry: false, error: new ApiError(code, message) };
    }
    if (res.statusCode >= 200 && res.statusCode < 300 && parsed && parsed.data !== undefined) return { retry: false, result: parsed.data as T };
    const error = new ApiError('http_error', `${endpoint.href} answered HTTP ${res.statusCode}${text ? `: ${text.slice(0, 200)}` : ''}`);
    return { retry: RETRY_STATUS.has(res.statusCode), error };
  }

  async function gql<T>(query: string, variables: Record<string, unknown> = {}): Promise<T> {
    const body = operationBody(query, variables);
    let waits = 0;
    for (let attempt = 0; ; ) {
      const r = await once<T>(body);
      if (!r.error) return r.result as T;
      if (r.waitMs !== undefined && waits < MAX_RATE_LIMIT_WAITS) {
        // Paced by the server: these waits are not failures and do not use up the retries.
        waits++;
        await new Promise((done) => setTimeout(done, r.waitMs));
        continue;
      }
      if (!r.retry || attempt >= RETRY_DELAYS_MS.length) throw r.error;
      await new Promise((done) => setTimeout(done, RETRY_DELAYS_MS[attempt]));
      attempt++;
    }
  }

  function subscribe<T>(
    query: string,
    variables: Record<string, unknown>,
    sink: { next: (data: T) => void; error: (e: Error) => void; complete: () => void },
  ): () => void {
    class TrustingWebSocket extends WebSocket {
      constructor(address: string, protocols?: string | string[]) {
        super(address, protocols, ca ? { ca } : {});
      }
    }
    // A ping every 10 s; a pong missing for 5 s means a dead connection (graphql-ws leaves that check to the client).
    let pongWait: NodeJS.Timeout | undefined;
    let socket: WebSocket | undefined;
    const client = createClient({
      url: websocketUrl(endpoint),
      webSocketImpl: TrustingWebSocket,
      connectionParams: { authorization: `Bearer ${key}` },
      retryAttempts: 0,
      lazy: true,
      keepAlive: 10_000,
      on: {
        ping: (received) => {
          if (received) return;
          pongWait = setTimeout(() => socket?.close(4408, 'Pong timeout'), 5_000);
        },
        pong: (received) => {
          if (received) clearTimeout(pongWait);
        },
        connected: (s) => {
          socket = s as WebSocket;
        },
        closed: () => clearTimeout(pongWait),
      },
    });
    clients.add(client);
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      clearTimeout(pongWait);
      clients.delete(client);
      void client.dispose();
    };
    const unsubscribe = client.subscribe<T>(
      { query, variables },
      {
        next: (value) => {
          if (value.errors?.length) {
            const first = value.errors[0]!;
            sink.error(new ApiError(String(first.extensions?.code ?? 'graphql_error'), first.message));
            return;
          }
          if (value.data) sink.next(value.data as T);
        },
        error: (e) => {
          end();
          sink.error(subscriptionError(e));
        },
        complete: () => {
          end();
          sink.complete();
        },
      },
    );
    return () => {
      unsubscribe();
      end();
    };
  }

  return {
    endpoint,
    gql,
    subscribe,
    close: async () => {
      await Promise.all([...clients].map((c) => c.dispose()));
      await dispatcher.close();
    },
  };
}

/** graphql-ws reports a close event, an Error or a list of GraphQL errors. */
function subscriptionError(e: unknown): Error {
  if (e instanceof Error) return e;
  if (Array.isArray(e)) return new ApiError('graphql_error', e.map((x) => (x as { message?: string }).message ?? String(x)).join('; '));
  const close = e as { code?: number; reason?: string; type?: string };
  if (close && typeof close.code === 'number') return new Error(`the WebSocket closed (${close.code}${close.reason ? ` ${close.reason}` : ''})`);
  if (close?.type === 'error') return new Error('the WebSocket failed');
  return new Error(String(e));
}

