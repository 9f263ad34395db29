import tls from 'node:tls';

export interface RawAnswer {
  /** Every response on the connection, in order (pipelined requests get one each). */
  responses: { status: number; headers: Record<string, string>; body: string }[];
  /** The connection ended without any response. */
  silent: boolean;
}

/**
 * Writes `bytes` as they are to a TLS connection (no client library to tidy the request up),
 * optionally closes the sending side, and reads every response until the server closes or
 * `idleMs` pass without data.
 */
export function rawTlsExchange(port: number, ca: string, bytes: Buffer, opts: { endWrite?: boolean; idleMs?: number } = {}): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: '127.0.0.1', port, ca, servername: 'localhost' });
    const chunks: Buffer[] = [];
    let timer: NodeJS.Timeout | undefined;
    const finish = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve(parseResponses(Buffer.concat(chunks)));
    };
    const idle = () => {
      clearTimeout(timer);
      timer = setTimeout(finish, opts.idleMs ?? 1500);
    };
    socket.once('secureConnect', () => {
      socket.write(bytes);
      if (opts.endWrite) socket.end();
      idle();
    });
    socket.on('data', (c: Buffer) => {
      chunks.push(c);
      idle();
    });
    socket.once('close', finish);
    socket.once('error', (e: NodeJS.ErrnoException) => (e.code === 'ECONNRESET' ? finish() : reject(e)));
  });
}

function parseResponses(all: Buffer): RawAnswer {
  const responses: RawAnswer['responses'] = [];
  let rest = all.toString('latin1');
  while (rest.startsWith('HTTP/1.1 ')) {
    const end = rest.indexOf('\r\n\r\n');
    if (end < 0) break;
    const [statusLine, ...lines] = rest.slice(0, end).split('\r\n');
    const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
    let bodyEnd = end + 4;
    if (headers['content-length']) bodyEnd += Number(headers['content-length']);
    else if (headers['transfer-encoding'] === 'chunked') {
      let body = '';
      let at = end + 4;
      for (;;) {
        const lineEnd = rest.indexOf('\r\n', at);
        const size = parseInt(rest.slice(at, lineEnd), 16);
        at = lineEnd + 2;
        if (!size) break;
        body += rest.slice(at, at + size);
        at += size + 2;
      }
      responses.push({ status: Number(statusLine!.split(' ')[1]), headers, body: Buffer.from(body, 'latin1').toString('utf8') });
      rest = rest.slice(rest.indexOf('\r\n\r\n', at - 2) + 4);
      continue;
    }
    responses.push({ status: Number(statusLine!.split(' ')[1]), headers, body: Buffer.from(rest.slice(end + 4, bodyEnd), 'latin1').toString('utf8') });
    rest = rest.slice(bodyEnd);
  }
  return { responses, silent: responses.length === 0 };
}
