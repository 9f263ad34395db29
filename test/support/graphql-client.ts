import { createClient, type Client } from 'graphql-ws';
import { Agent, fetch as undiciFetch } from 'undici';
import WebSocket from 'ws';
import { loadTls } from '../../src/http/tls.ts';
import type { TestService } from './app.ts';

/** GraphQL over HTTPS, the server's certificate trusted as in the REST tests (any node: its base URL and config). */
export async function graphqlClient(svc: { baseUrl: string; app: { config: Pick<TestService['app']['config'], 'dataDir' | 'tlsCertFile' | 'tlsKeyFile'> } }) {
  const tls = await loadTls(svc.app.config);
  const dispatcher = new Agent({ connect: { ca: tls.cert } });
  const fetchFn = ((input: any, init: any = {}) => undiciFetch(input, { ...init, dispatcher })) as unknown as typeof fetch;
  const url = `${svc.baseUrl}/graphql`;
  async function gql(query: string, variables: Record<string, unknown> = {}, key?: string): Promise<{ status: number; body: any; headers: Headers }> {
    const res = await fetchFn(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
      body: JSON.stringify({ query, variables }),
    });
    return { status: res.status, body: await res.json(), headers: res.headers };
  }
  function ws(key: string | undefined): Client {
    class TrustingWebSocket extends WebSocket {
      constructor(address: string, protocols?: string | string[]) {
        super(address, protocols, { ca: tls.cert });
      }
    }
    return createClient({
      url: url.replace(/^https/, 'wss'),
      webSocketImpl: TrustingWebSocket,
      connectionParams: key ? { authorization: `Bearer ${key}` } : {},
      retryAttempts: 0,
      lazy: true,
    });
  }
  return { url, gql, ws, fetchFn, close: () => dispatcher.close() };
}

export interface ProgressEvent {
  at: number;
  status: string;
  progress: number | null;
  stage: string | null;
}

/** Every generationUpdated event of one generation, with its live progress, until the server ends the stream (or `timeoutMs`). */
export async function progressEvents(client: Awaited<ReturnType<typeof graphqlClient>>, key: string, id: string, timeoutMs = 40_000): Promise<ProgressEvent[]> {
  const ws = client.ws(key);
  const seen: ProgressEvent[] = [];
  const limit = setTimeout(() => void ws.dispose(), timeoutMs);
  try {
    const query = 'subscription ($id: ID!) { generationUpdated(id: $id) { status progress stage } }';
    for await (const m of ws.iterate<{ generationUpdated: Omit<ProgressEvent, 'at'> }>({ query, variables: { id } })) {
      if (m.errors) throw new Error(JSON.stringify(m.errors));
      seen.push({ at: Date.now(), ...m.data!.generationUpdated });
    }
  } finally {
    clearTimeout(limit);
    await ws.dispose();
  }
  return seen;
}
