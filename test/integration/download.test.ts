import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createTcpServer, type Server, type Socket } from 'node:net';
import { AppError } from '../../src/domain/errors.ts';
import { isAllowedAddress } from '../../src/adapters/net/address-policy.ts';
import { download, downloadErrorToAppError, DownloadError, openDownload, type DownloadOptions } from '../../src/adapters/net/download.ts';

const MB = 1024 * 1024;
const TEN_MB = 10 * MB;

const servers: Server[] = [];
const openSockets = new Set<Socket>();

async function listen(server: Server, host: string): Promise<number> {
  servers.push(server);
  server.on('connection', (socket: Socket) => {
    openSockets.add(socket);
    socket.on('close', () => openSockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, resolve);
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('server has no port');
  return address.port;
}

/** Writes `size` bytes in 64 KiB pieces, honouring backpressure. */
async function writeBytes(res: ServerResponse, size: number): Promise<void> {
  const piece = Buffer.alloc(64 * 1024, 0x61);
  let left = size;
  while (left > 0 && !res.destroyed) {
    const n = Math.min(left, piece.length);
    left -= n;
    if (!res.write(piece.subarray(0, n))) await new Promise((resolve) => res.once('drain', resolve));
  }
  res.end();
}

function route(req: IncomingMessage, res: ServerResponse): void {
  const url = new URL(req.url ?? '/', 'http://test');
  const [, name, arg = ''] = url.pathname.split('/');
  switch (name) {
    case 'ok':
      res.writeHead(200, { 'content-type': 'text/plain' }).end('hello');
      return;
    case 'bytes': // declared length
      res.writeHead(200, { 'content-length': arg });
      void writeBytes(res, Number(arg));
      return;
    case 'chunked': // no length at all
      res.writeHead(200, { 'transfer-encoding': 'chunked' });
      void writeBytes(res, Number(arg));
      return;
    case 'declares': // headers promising a big body that never comes
      res.writeHead(200, { 'content-length': arg });
      res.flushHeaders();
      return;
    case 'chain': {
      const hops = Number(arg);
      if (hops === 0) res.writeHead(200).end('end of chain');
      else res.writeHead(302, { location: `/chain/${hops - 1}` }).end();
      return;
    }
    case 'redirect-to':
      res.writeHead(302, { location: url.searchParams.get('url') ?? '' }).end();
      return;
    case 'missing':
      res.writeHead(404).end('not here');
      return;
    case 'hang':
      return;
    case 'drip': {
      res.writeHead(200, { 'transfer-encoding': 'chunked' });
      const timer = setInterval(() => res.write('x'), 50);
      res.on('close', () => clearInterval(timer));
      return;
    }
    default:
      res.writeHead(500).end();
  }
}

/** A raw TCP server that answers every connection with `response` and then closes it. */
function rawHttpServer(response: Buffer): Server {
  return createTcpServer((socket) => {
    socket.once('data', () => socket.end(response));
  });
}

let port: number;
let ipv6Port: number;
let otherLoopbackPort: number;
let understatedPort: number;
let overstatedPort: number;
let closeDelimitedPort: number;
let silentTlsPort: number;
let base: string;

beforeAll(async () => {
  port = await listen(createHttpServer(route), '127.0.0.1');
  ipv6Port = await listen(createHttpServer(route), '::1');
  otherLoopbackPort = await listen(createHttpServer((_req, res) => res.end('internal secret')), '127.0.0.2');
  understatedPort = await listen(
    rawHttpServer(Buffer.concat([Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n'), Buffer.alloc(5000, 0x62)])),
    '127.0.0.1',
  );
  overstatedPort = await listen(rawHttpServer(Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n0123456789')), '127.0.0.1');
  closeDelimitedPort = await listen(
    rawHttpServer(Buffer.concat([Buffer.from('HTTP/1.0 200 OK\r\nConnection: close\r\n\r\n'), Buffer.alloc(1001, 0x63)])),
    '127.0.0.1',
  );
  // Accepts TCP but never speaks TLS, so only the connect timeout can end the handshake.
  silentTlsPort = await listen(createTcpServer(() => {}), '127.0.0.1');
  base = `http://127.0.0.1:${port}`;
});

afterAll(async () => {
  for (const socket of openSockets) socket.destroy();
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
});

const local: DownloadOptions = { maxBytes: 1000, allowPrivate: true };

async function failure(promise: Promise<unknown>): Promise<DownloadError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(DownloadError);
  return error as DownloadError;
}

describe('download: address policy', () => {
  const reachableLocalUrls = (): string[] => [
    `http://127.0.0.1:${port}/ok`,
    `http://localhost:${port}/ok`, // a name, so only the DNS lookup can catch it
    `http://[::1]:${ipv6Port}/ok`,
    `http://0.0.0.0:${port}/ok`,
    `http://[::ffff:127.0.0.1]:${port}/ok`,
    `http://2130706433:${port}/ok`, // the URL parser turns this into 127.0.0.1
    `http://127.0.0.2:${otherLoopbackPort}/`,
  ];

  it('reaches every local test URL when private networks are allowed (control)', async () => {
    for (const url of reachableLocalUrls()) {
      const result = await download(url, local);
      expect(result.bytes.length, url).toBeGreaterThan(0);
    }
  });

  it('refuses every local URL when private networks are not allowed', async () => {
    for (const url of reachableLocalUrls()) {
      const error = await failure(download(url, { ...local, allowPrivate: false }));
      expect(error.reason, url).toBe('blocked_address');
      expect(error.message).toBe('the URL resolves to a private or reserved address');
    }
  });

  it.each([
    'http://169.254.169.254/latest/meta-data/',
    'http://[fd00:ec2::254]/latest/meta-data/',
    'http://10.0.0.1/',
    'http://192.168.1.1/',
    'http://100.64.0.1/',
    'http://[::]/',
    'https://[fe80::1]/',
    'http://[::7f00:1]/',
  ])('refuses %s before connecting', async (url) => {
    const started = Date.now();
    const error = await failure(download(url, { ...local, allowPrivate: false, timeoutMs: 5000 }));
    expect(error.reason).toBe('blocked_address');
    expect(Date.now() - started).toBeLessThan(1000);
  });

  describe('redirect hops are checked again', () => {
    // Every test server is on loopback, so this policy plays "127.0.0.1 is a public host"
    // and keeps the real rule for everything else, including 127.0.0.2.
    const onlyFirstHopPublic = { ...local, allowPrivate: false, policy: (ip: string) => ip === '127.0.0.1' || isAllowedAddress(ip) };

    it('refuses a redirect to another loopback address', async () => {
      const target = `http://127.0.0.2:${otherLoopbackPort}/`;
      const error = await failure(download(`${base}/redirect-to?url=${encodeURIComponent(target)}`, onlyFirstHopPublic));
      expect(error.reason).toBe('blocked_address');
    });

    it('follows the same redirect when the target is allowed too (control)', async () => {
      const target = `http://127.0.0.2:${otherLoopbackPort}/`;
      const result = await download(`${base}/redirect-to?url=${encodeURIComponent(target)}`, {
        ...onlyFirstHopPublic,
        policy: (ip) => ip === '127.0.0.1' || ip === '127.0.0.2',
      });
      expect(result.bytes.toString()).toBe('internal secret');
      expect(result.finalUrl).toBe(target);
    });

    it('refuses a redirect to the cloud metadata address', async () => {
      const target = 'http://169.254.169.254/latest/meta-data/iam/';
      const error = await failure(download(`${base}/redirect-to?url=${encodeURIComponent(target)}`, onlyFirstHopPublic));
      expect(error.reason).toBe('blocked_address');
    });

    it('refuses a redirect to a non-http scheme', async () => {
      const error = await failure(download(`${base}/redirect-to?url=${encodeURIComponent('file:///etc/passwd')}`, local));
      expect(error.reason).toBe('invalid_url');
    });
  });
});

describe('download: URLs', () => {
  it.each(['ftp://example.com/a.png', 'file:///etc/passwd', 'data:image/png;base64,iVBORw0KGgo=', 'javascript:alert(1)', 'gopher://x/', 'not a url', '', '/relative.png'])(
    'refuses %j',
    async (url) => {
      const error = await failure(download(url, local));
      expect(error.reason).toBe('invalid_url');
    },
  );

  it('returns the bytes, the content type and the final URL', async () => {
    const result = await download(`${base}/ok`, local);
    expect(result).toEqual({ bytes: Buffer.from('hello'), contentType: 'text/plain', finalUrl: `${base}/ok` });
  });
});

describe('download: size limit', () => {
  it('accepts a body of exactly maxBytes, with and without Content-Length', async () => {
    expect((await download(`${base}/bytes/1000`, local)).bytes.length).toBe(1000);
    expect((await download(`${base}/chunked/1000`, local)).bytes.length).toBe(1000);
  });

  it('refuses maxBytes + 1 with Content-Length', async () => {
    const error = await failure(download(`${base}/bytes/1001`, local));
    expect(error.reason).toBe('too_large');
    expect(error.message).toBe('the file is larger than 1000 bytes');
  });

  it('refuses maxBytes + 1 without Content-Length (chunked)', async () => {
    expect((await failure(download(`${base}/chunked/1001`, local))).reason).toBe('too_large');
  });

  it('refuses maxBytes + 1 in a body delimited by connection close', async () => {
    const error = await failure(download(`http://127.0.0.1:${closeDelimitedPort}/`, local));
    expect(error.reason).toBe('too_large');
  });

  it('refuses on a large Content-Length before any body arrives', async () => {
    const started = Date.now();
    const error = await failure(download(`${base}/declares/${TEN_MB + 1}`, { maxBytes: TEN_MB, allowPrivate: true, timeoutMs: 5000 }));
    expect(error.reason).toBe('too_large');
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('never reads past an understated Content-Length', async () => {
    // HTTP framing ends the body at the declared 10 bytes; the 5000 that follow are never
    // delivered as body, so an understated length cannot smuggle data past the counter.
    const result = await download(`http://127.0.0.1:${understatedPort}/`, local);
    expect(result.bytes.length).toBe(10);
  });

  it('refuses a body shorter than its Content-Length', async () => {
    expect((await failure(download(`http://127.0.0.1:${overstatedPort}/`, local))).reason).toBe('network');
  });

  it('accepts exactly 10 MB with and without Content-Length', async () => {
    const options = { maxBytes: TEN_MB, allowPrivate: true };
    expect((await download(`${base}/bytes/${TEN_MB}`, options)).bytes.length).toBe(TEN_MB);
    expect((await download(`${base}/chunked/${TEN_MB}`, options)).bytes.length).toBe(TEN_MB);
  });

  it('refuses 10 MB + 1 with and without Content-Length', async () => {
    const options = { maxBytes: TEN_MB, allowPrivate: true };
    for (const url of [`${base}/bytes/${TEN_MB + 1}`, `${base}/chunked/${TEN_MB + 1}`]) {
      const error = await failure(download(url, options));
      expect(error.reason, url).toBe('too_large');
      expect(error.message).toBe('the file is larger than 10 MB');
    }
  });
});

describe('download: redirects and status', () => {
  it('follows up to maxRedirects relative redirects', async () => {
    const result = await download(`${base}/chain/3`, { ...local, maxRedirects: 3 });
    expect(result.bytes.toString()).toBe('end of chain');
    expect(result.finalUrl).toBe(`${base}/chain/0`);
  });

  it('refuses more than maxRedirects redirects', async () => {
    const error = await failure(download(`${base}/chain/4`, { ...local, maxRedirects: 3 }));
    expect(error.reason).toBe('too_many_redirects');
  });

  it('defaults to at most 3 redirects', async () => {
    expect((await download(`${base}/chain/3`, local)).bytes.toString()).toBe('end of chain');
    expect((await failure(download(`${base}/chain/4`, local))).reason).toBe('too_many_redirects');
  });

  it('refuses a 404', async () => {
    const error = await failure(download(`${base}/missing`, local));
    expect(error.reason).toBe('http_status');
    expect(error.message).toBe('the server answered with HTTP status 404');
  });

  it('refuses a redirect without a usable Location', async () => {
    expect((await failure(download(`${base}/redirect-to`, local))).reason).toBe('http_status');
  });
});

describe('download: timeouts', () => {
  it('gives up on a server that never answers', async () => {
    const started = Date.now();
    const error = await failure(download(`${base}/hang`, { ...local, timeoutMs: 300 }));
    expect(error.reason).toBe('timeout');
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('gives up on a body that drips forever', async () => {
    const started = Date.now();
    const error = await failure(download(`${base}/drip`, { ...local, timeoutMs: 300 }));
    expect(error.reason).toBe('timeout');
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('applies the connect timeout to a TLS handshake that never completes', async () => {
    const started = Date.now();
    const error = await failure(
      download(`https://127.0.0.1:${silentTlsPort}/`, { ...local, connectTimeoutMs: 200, timeoutMs: 10_000 }),
    );
    expect(error.reason).toBe('timeout');
    expect(Date.now() - started).toBeLessThan(2000);
  });
});

describe('openDownload: the body as it arrives', () => {
  /** Reads a streamed body, counting what came before it ended or failed. */
  async function drain(body: AsyncIterable<Buffer>): Promise<{ got: number; error?: unknown }> {
    let got = 0;
    try {
      for await (const chunk of body) got += chunk.length;
      return { got };
    } catch (error) {
      return { got, error };
    }
  }

  it('streams the body with its type, final URL and declared size', async () => {
    const d = await openDownload(`${base}/bytes/1000`, local);
    expect(d.declaredSize).toBe(1000);
    expect(await drain(d.body)).toEqual({ got: 1000 });
    const redirected = await openDownload(`${base}/chain/1`, local);
    expect(redirected.finalUrl).toBe(`${base}/chain/0`);
    expect(redirected.declaredSize).toBeUndefined();
  });

  it('fails a chunked body once it passes the limit, after handing on no more than the limit', async () => {
    const d = await openDownload(`${base}/chunked/${TEN_MB}`, { maxBytes: MB, allowPrivate: true });
    const { got, error } = await drain(d.body);
    expect(error).toBeInstanceOf(DownloadError);
    expect((error as DownloadError).reason).toBe('too_large');
    expect(got).toBeLessThanOrEqual(MB);
  });

  it('refuses a declared length past the limit before answering', async () => {
    expect((await failure(openDownload(`${base}/bytes/1001`, local))).reason).toBe('too_large');
  });

  it('fails a body that drips past the timeout with a timeout', async () => {
    const d = await openDownload(`${base}/drip`, { ...local, timeoutMs: 300 });
    const { error } = await drain(d.body);
    expect((error as DownloadError).reason).toBe('timeout');
  });

  it('fails a body cut short of its Content-Length as a network failure', async () => {
    const d = await openDownload(`http://127.0.0.1:${overstatedPort}/`, local);
    expect(((await drain(d.body)).error as DownloadError).reason).toBe('network');
  });

  it('lets the reader stop early: the server sees the connection close', async () => {
    const d = await openDownload(`${base}/chunked/${TEN_MB}`, { maxBytes: TEN_MB, allowPrivate: true });
    const before = openSockets.size;
    for await (const _chunk of d.body) break;
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(openSockets.size).toBeLessThan(before);
  });
});

describe('downloadErrorToAppError', () => {
  it('turns a DownloadError into a validation error naming the field', () => {
    const appError = downloadErrorToAppError('image_url', new DownloadError('too_large', 'the file is larger than 10 MB'));
    expect(appError).toBeInstanceOf(AppError);
    expect(appError.code).toBe('validation_error');
    expect(appError.message).toBe('image_url: the file is larger than 10 MB');
  });

  it('rethrows anything else unchanged', () => {
    const other = new Error('boom');
    expect(() => downloadErrorToAppError('image_url', other)).toThrow(other);
  });
});
