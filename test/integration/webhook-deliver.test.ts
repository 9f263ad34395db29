import { createHmac, randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, describe, expect, it } from 'vitest';
import { deliverWebhook } from '../../src/adapters/webhook-sender/deliver.ts';
import { webhookBody } from '../../src/domain/webhook-payload.ts';
import { freePort } from '../support/net.ts';

const secret = 'whsec_integration_91b7';

interface Received {
  headers: IncomingHttpHeaders;
  raw: Buffer;
}

interface Receiver {
  url: string;
  requests: Received[];
  /** TCP connections accepted, so "nothing reached the receiver" covers more than whole requests. */
  connections: number;
  /** Resolves when the handler's response closes (finished or cut off by the client). */
  responseClosed: Promise<void>;
}

const servers: Server[] = [];
const sockets = new Set<Socket>();

/**
 * A receiver on 127.0.0.1 that records every request with its raw body bytes before the
 * handler answers, so assertions see exactly what arrived on the wire.
 */
async function receiver(handle: (req: IncomingMessage, res: ServerResponse) => void): Promise<Receiver> {
  let markClosed!: () => void;
  const state = {
    requests: [] as Received[],
    connections: 0,
    responseClosed: new Promise<void>((resolve) => (markClosed = resolve)),
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      state.requests.push({ headers: req.headers, raw: Buffer.concat(chunks) });
      res.on('close', markClosed);
      handle(req, res);
    });
  });
  server.on('connection', (socket: Socket) => {
    state.connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  servers.push(server);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('receiver has no port');
  return Object.assign(state, { url: `http://127.0.0.1:${address.port}/hooks/adforge` });
}

afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
});

function completedBody() {
  return webhookBody({
    id: randomUUID(),
    type: 'talking-avatar',
    status: 'completed',
    created_at: new Date('2025-05-01T08:00:00.000Z'),
    completed_at: new Date('2025-05-01T08:03:12.500Z'),
    result_url: 'https://files.example.com/results/a.mp4?expires=1746090000&sig=ab12',
  });
}

describe('deliverWebhook', () => {
  it('sends the exact signed bytes: an independent receiver recomputes the HMAC and checks the headers', async () => {
    const hook = await receiver((_req, res) => res.writeHead(204).end());
    // Non-ASCII in the body: the receiver hashes the bytes it got, so any re-encoding would show.
    const body = webhookBody({
      id: randomUUID(),
      type: 'localize',
      status: 'failed',
      created_at: new Date('2025-05-01T08:00:00.000Z'),
      completed_at: new Date('2025-05-01T08:00:09.000Z'),
      error: 'Übersetzung fehlgeschlagen — 🚫',
    });
    const eventId = randomUUID();
    const before = Math.floor(Date.now() / 1000);

    const result = await deliverWebhook({ url: hook.url, secret, body, eventId, allowPrivate: true });

    expect(result).toMatchObject({ ok: true, statusCode: 204, error: null });
    expect(result.latencyMs).toBeGreaterThanOrEqual(0);
    expect(hook.requests).toHaveLength(1);
    const got = hook.requests[0]!;
    const recomputed = createHmac('sha256', secret).update(got.raw).digest('hex');
    expect(got.headers['x-service-signature']).toBe(recomputed);
    expect(JSON.parse(got.raw.toString('utf8'))).toEqual(body);
    expect(got.raw.toString('utf8')).toBe(JSON.stringify(body));
    expect(got.headers['content-type']).toBe('application/json');
    expect(got.headers['content-length']).toBe(String(got.raw.length));
    expect(got.headers['x-service-event-id']).toBe(eventId);
    expect(got.headers['user-agent']).toBe('adforge-webhooks/1');
    const timestamp = got.headers['x-service-timestamp'];
    expect(timestamp).toMatch(/^[0-9]+$/);
    expect(Number(timestamp)).toBeGreaterThanOrEqual(before);
    expect(Number(timestamp)).toBeLessThanOrEqual(Math.floor(Date.now() / 1000));
  });

  it('also signs by Standard Webhooks: the standardwebhooks package verifies what arrived with the key\'s secret, and refuses a tampered body', async () => {
    const hook = await receiver((_req, res) => res.writeHead(200).end());
    // A secret as keys get them: whsec_ and 32 random bytes in base64.
    const keySecret = `whsec_${Buffer.from(Array.from({ length: 32 }, (_, i) => (i * 37 + 11) % 256)).toString('base64')}`;
    const body = completedBody();
    const eventId = randomUUID();
    const result = await deliverWebhook({ url: hook.url, secret: keySecret, body, eventId, allowPrivate: true });
    expect(result.ok).toBe(true);
    const got = hook.requests[0]!;
    const headers = {
      'webhook-id': String(got.headers['webhook-id']),
      'webhook-timestamp': String(got.headers['webhook-timestamp']),
      'webhook-signature': String(got.headers['webhook-signature']),
    };
    expect(headers['webhook-id']).toBe(eventId);
    expect(headers['webhook-timestamp']).toBe(String(got.headers['x-service-timestamp']));
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(new Webhook(keySecret).verify(got.raw.toString('utf8'), headers)).toEqual(body);
    // Our own header is still the spec's: the body unchanged, signed as before.
    expect(got.headers['x-service-signature']).toBe(createHmac('sha256', keySecret).update(got.raw).digest('hex'));
    const tampered = got.raw.toString('utf8').replace('completed', 'failed');
    expect(() => new Webhook(keySecret).verify(tampered, headers)).toThrow();
    const otherSecret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
    expect(() => new Webhook(otherSecret).verify(got.raw.toString('utf8'), headers)).toThrow();
  });

  it('records a 500 as not ok, after exactly one request', async () => {
    const hook = await receiver((_req, res) => res.writeHead(500, { 'content-type': 'text/plain' }).end('oops'));
    const result = await deliverWebhook({
      url: hook.url,
      secret,
      body: completedBody(),
      eventId: randomUUID(),
      allowPrivate: true,
    });
    expect(result).toMatchObject({ ok: false, statusCode: 500, error: 'HTTP 500' });
    expect(hook.requests).toHaveLength(1);
  });

  it('returns an error quickly when the receiver is down', async () => {
    const port = await freePort();
    const result = await deliverWebhook({
      url: `http://127.0.0.1:${port}/hooks`,
      secret,
      body: completedBody(),
      eventId: randomUUID(),
      allowPrivate: true,
    });
    expect(result).toMatchObject({ ok: false, statusCode: null, error: 'connection refused' });
    expect(result.latencyMs).toBeLessThan(2_000);
  });

  it(
    'gives up after 10 s on a receiver that answers after 11 s, having sent one request',
    async () => {
      const hook = await receiver((_req, res) => {
        const timer = setTimeout(() => res.writeHead(200).end(), 11_000);
        res.on('close', () => clearTimeout(timer));
      });
      const result = await deliverWebhook({
        url: hook.url,
        secret,
        body: completedBody(),
        eventId: randomUUID(),
        allowPrivate: true,
      });
      expect(result).toMatchObject({ ok: false, statusCode: null, error: 'timed out after 10 s' });
      expect(result.latencyMs).toBeGreaterThanOrEqual(9_900);
      expect(result.latencyMs).toBeLessThan(10_900);
      expect(hook.requests).toHaveLength(1);
      // We hung up rather than wait for the late answer.
      await hook.responseClosed;
    },
    20_000,
  );

  it('does not follow a 302: the redirect target receives nothing', async () => {
    const target = await receiver((_req, res) => res.writeHead(200).end());
    const hook = await receiver((_req, res) => res.writeHead(302, { location: target.url }).end());
    const result = await deliverWebhook({
      url: hook.url,
      secret,
      body: completedBody(),
      eventId: randomUUID(),
      allowPrivate: true,
    });
    expect(result.ok).toBe(false);
    expect(result.statusCode).toBe(302);
    expect(result.error).toMatch(/redirects are not followed/);
    expect(hook.requests).toHaveLength(1);
    expect(target.connections).toBe(0);
  });

  it('blocks a loopback URL when private addresses are not allowed, before any connection', async () => {
    const hook = await receiver((_req, res) => res.writeHead(200).end());
    const port = new URL(hook.url).port;
    for (const url of [hook.url, `http://localhost:${port}/hooks`, `http://[::ffff:127.0.0.1]:${port}/hooks`]) {
      const result = await deliverWebhook({ url, secret, body: completedBody(), eventId: randomUUID(), allowPrivate: false });
      expect(result).toMatchObject({ ok: false, statusCode: null });
      expect(result.error).toMatch(/private or reserved address/);
    }
    expect(hook.connections).toBe(0);
    expect(hook.requests).toHaveLength(0);
  });

  it('stops reading a huge response body and still returns promptly', async () => {
    const hook = await receiver((_req, res) => {
      // An endless body: keeps writing until the client hangs up.
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      const piece = Buffer.alloc(64 * 1024, 0x61);
      const pump = (): void => {
        while (!res.destroyed && res.write(piece));
        if (!res.destroyed) res.once('drain', pump);
      };
      pump();
    });
    const started = Date.now();
    const result = await deliverWebhook({
      url: hook.url,
      secret,
      body: completedBody(),
      eventId: randomUUID(),
      allowPrivate: true,
    });
    expect(result).toMatchObject({ ok: true, statusCode: 200, error: null });
    expect(Date.now() - started).toBeLessThan(2_000);
    await hook.responseClosed;
  });

  it('returns an error result, without throwing, for invalid and non-http URLs', async () => {
    const common = { secret, body: completedBody(), eventId: randomUUID(), allowPrivate: true };
    await expect(deliverWebhook({ ...common, url: 'not a url' })).resolves.toMatchObject({
      ok: false,
      statusCode: null,
      error: 'invalid webhook URL',
    });
    await expect(deliverWebhook({ ...common, url: 'ftp://127.0.0.1/hooks' })).resolves.toMatchObject({
      ok: false,
      statusCode: null,
      error: 'only http and https webhook URLs are allowed',
    });
  });
});
