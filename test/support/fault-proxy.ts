import http from 'node:http';
import net from 'node:net';
import { closeServer, listenOnLoopback } from './http-fake.ts';

/**
 * What goes wrong between adforge and a provider, injected by a proxy in front of the provider's
 * fake. Faults that the provider may have acted on are forwarded first, so the fake accepts (and
 * counts) the request before the answer goes wrong; the others are answered by the proxy alone,
 * as a front server refusing before the provider saw anything.
 */
export type Fault =
  /** Forwarded; the answer is held until the client gives up and closes the connection. */
  | { kind: 'hang' }
  /** Forwarded; once the provider has answered, the client's connection is reset instead. */
  | { kind: 'reset' }
  /** Answered 307 by the proxy (to the same path at the provider), not forwarded. */
  | { kind: 'redirect' }
  /** Forwarded; the provider's status and headers with a body that is not what it said (cut JSON). */
  | { kind: 'malformed' }
  /** Forwarded; a 200 JSON answer that never ends, until the client hangs up (or 256 MiB). */
  | { kind: 'oversized' }
  /** Answered by the proxy with this status, headers and body, not forwarded. */
  | { kind: 'status'; status: number; headers?: Record<string, string>; body: unknown }
  /** Forwarded (the original is in flight at the provider); answered with the provider's "still in progress". */
  | { kind: 'in_progress'; status: number; headers?: Record<string, string>; body: unknown }
  /**
   * Forwarded; the answer is held, `onHeld` is told once the provider has answered (the harness
   * kills the worker there), and the connection is dropped when the client goes.
   */
  | { kind: 'kill' };

export interface FaultRule {
  method: string;
  path: RegExp;
  fault: Fault;
  /** Matching requests let through untouched before the one that gets the fault. */
  skip?: number;
}

export interface ProxyLogLine {
  /** When it arrived (ms). */
  at: number;
  method: string;
  path: string;
  /** The status the client got, `fault:<kind>` when a fault decided it, or 0 for none. */
  outcome: string;
}

const OVERSIZED_LIMIT = 256 * 1024 * 1024;
const TEXT = /json|text|xml|javascript/;

/**
 * An HTTP proxy in front of a provider's fake: every request goes through to the fake unchanged
 * (links in its text answers rewritten to the proxy, so that polls and downloads come back through
 * it), except the one an armed rule picks, which gets its fault once. WebSocket upgrades are piped
 * through as they are.
 */
export async function startFaultProxy(target: string) {
  const origin = new URL(target).origin;
  const agent = new http.Agent({ keepAlive: true });
  const sockets = new Set<net.Socket>();
  const log: ProxyLogLine[] = [];
  let armed: (FaultRule & { seen: number }) | undefined;
  let injected: { rule: FaultRule; at: number } | undefined;
  let heldListener: (() => void) | undefined;
  let inFlight = 0;
  let self = '';

  /** The fake's answer in full (the request forwarded as it came). */
  const forward = (req: http.IncomingMessage, body: Buffer) =>
    new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
      const headers = { ...req.headers, host: new URL(origin).host };
      const out = http.request(`${origin}${req.url}`, { method: req.method, headers, agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 502, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      });
      out.on('error', reject);
      out.end(body);
    });

  /** The fake's links in a text answer point at the proxy, so what the client reads next comes through it too. */
  const rewrite = (headers: http.IncomingHttpHeaders, body: Buffer): { headers: http.OutgoingHttpHeaders; body: Buffer } => {
    const type = String(headers['content-type'] ?? '');
    const out: http.OutgoingHttpHeaders = { ...headers };
    delete out['transfer-encoding'];
    delete out.connection;
    delete out['keep-alive'];
    if (typeof headers.location === 'string') out.location = headers.location.replaceAll(origin, self);
    if (!TEXT.test(type)) return { headers: { ...out, 'content-length': body.length }, body };
    const text = Buffer.from(body.toString('utf8').replaceAll(origin, self));
    return { headers: { ...out, 'content-length': text.length }, body: text };
  };

  const pick = (req: http.IncomingMessage): Fault | undefined => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (!armed || injected || armed.method !== req.method || !armed.path.test(path)) return undefined;
    if (armed.seen++ < (armed.skip ?? 0)) return undefined;
    injected = { rule: armed, at: Date.now() };
    return armed.fault;
  };

  const sendJson = (res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
    res.end(text);
  };

  /** Resolves when the client has gone (closed or reset its connection). */
  const clientGone = (req: http.IncomingMessage) => new Promise<void>((resolve) => (req.socket.destroyed ? resolve() : req.socket.once('close', () => resolve())));

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<string> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    const fault = pick(req);
    if (!fault) {
      const answer = await forward(req, body);
      const out = rewrite(answer.headers, answer.body);
      res.writeHead(answer.status, out.headers);
      res.end(out.body);
      return String(answer.status);
    }
    switch (fault.kind) {
      case 'status':
        sendJson(res, fault.status, fault.body, fault.headers);
        break;
      case 'redirect':
        res.writeHead(307, { location: `${self}${req.url}`, 'content-length': 0 });
        res.end();
        break;
      case 'hang':
        await forward(req, body);
        await clientGone(req);
        break;
      case 'kill':
        await forward(req, body);
        heldListener?.();
        await clientGone(req);
        break;
      case 'reset':
        await forward(req, body);
        req.socket.resetAndDestroy();
        break;
      case 'malformed': {
        const answer = await forward(req, body);
        const text = answer.body.toString('utf8');
        // Cut mid-value, with bytes no JSON parser takes: what a proxy that truncated the answer leaves.
        sendJson(res, answer.status, `${text.slice(0, Math.max(1, Math.floor(text.length / 2)))}\u0000<`);
        break;
      }
      case 'oversized': {
        await forward(req, body);
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"data":"');
        const chunk = Buffer.alloc(64 * 1024, 'a');
        let closed = false;
        res.once('close', () => (closed = true));
        for (let sent = 0; sent < OVERSIZED_LIMIT && !closed; sent += chunk.length) {
          if (res.write(chunk)) continue;
          await new Promise<void>((resolve) => {
            const on = () => {
              res.off('drain', on);
              res.off('close', on);
              resolve();
            };
            res.on('drain', on);
            res.on('close', on);
          });
        }
        if (!closed) res.end('"}');
        break;
      }
      case 'in_progress':
        await forward(req, body);
        sendJson(res, fault.status, fault.body, fault.headers);
        break;
    }
    return `fault:${fault.kind}`;
  }

  const server = http.createServer((req, res) => {
    inFlight++;
    const line: ProxyLogLine = { at: Date.now(), method: req.method ?? '', path: req.url ?? '', outcome: '0' };
    log.push(line);
    handle(req, res)
      .then((outcome) => (line.outcome = outcome))
      .catch(() => {
        if (!res.headersSent) res.writeHead(502).end();
        else res.destroy();
      })
      .finally(() => inFlight--);
  });
  server.on('connection', (s: net.Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  // ComfyUI's progress socket: piped through to the fake as it is.
  server.on('upgrade', (req: http.IncomingMessage, socket: net.Socket, head: Buffer) => {
    const u = new URL(origin);
    const upstream = net.connect(Number(u.port), u.hostname, () => {
      const lines = [`${req.method} ${req.url} HTTP/1.1`, ...Object.entries(req.headers).map(([k, v]) => `${k}: ${k === 'host' ? u.host : String(v)}`)];
      upstream.write(`${lines.join('\r\n')}\r\n\r\n`);
      if (head.length) upstream.write(head);
      socket.pipe(upstream).pipe(socket);
    });
    for (const s of [socket, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => s.destroy());
    }
    socket.on('close', () => upstream.destroy());
    upstream.on('close', () => socket.destroy());
  });
  self = await listenOnLoopback(server);

  return {
    url: self,
    log,
    /** Requests being answered now (a held one included): none means the proxy is idle. */
    get inFlight() {
      return inFlight;
    },
    /** The next matching request (after `skip`) gets the fault; every other one goes through. */
    arm(rule: FaultRule) {
      armed = { ...rule, seen: 0 };
      injected = undefined;
    },
    disarm() {
      armed = undefined;
    },
    /** The rule whose fault was applied since it was armed, if any. */
    get injected() {
      return injected;
    },
    /** Called once a `kill` fault's request has been answered by the provider and the answer is held. */
    onHeld(listener: (() => void) | undefined) {
      heldListener = listener;
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      agent.destroy();
      await closeServer(server);
    },
  };
}
export type FaultProxy = Awaited<ReturnType<typeof startFaultProxy>>;
