import fs from 'node:fs/promises';
import path from 'node:path';
import fc from 'fast-check';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/app.ts';
import { rawTlsExchange, type RawAnswer } from '../support/raw-tls.ts';

// Hostile headers, written byte for byte over TLS: Idempotency-Key of every length and byte,
// Content-Length that lies, headers sent twice. Never a 5xx; every 4xx in the error shape;
// nothing charged or stored for a refused request.

const RUNS = Number(process.env.FUZZ_RUNS ?? 12) * 4;
const CREATE = '/api/v1/images/text-to-image';
const BODY = Buffer.from(JSON.stringify({ model: 'fast', prompt: 'hostile', aspect_ratio: '1:1' }));

let svc: TestService;
let ca: string;
let key: string;
let otherKey: string;

beforeAll(async () => {
  svc = await startTestService();
  ca = await fs.readFile(path.join(svc.dataDir, 'tls', 'self-signed-cert.pem'), 'utf8');
  ({ key } = await svc.team({ credits: 1_000_000 }));
  ({ key: otherKey } = await svc.team({ credits: 1_000_000 }));
});
afterAll(() => svc?.close());

async function charged(): Promise<{ credits: number; generations: number; keys: number }> {
  const { rows } = await sql<{ credits: number; generations: number; keys: number }>`select
    (select coalesce(sum(credits_used), 0) from teams)::int as credits,
    (select count(*) from generations)::int as generations,
    (select count(*) from idempotency_keys)::int as keys`.execute(svc.app.db);
  return rows[0]!;
}

function request(head: string[], body: Buffer = BODY, contentLength: number | null = body.length): Buffer {
  const lines = [`POST ${CREATE} HTTP/1.1`, 'Host: localhost', `Authorization: Bearer ${key}`, 'Content-Type: application/json', 'Connection: close', ...head];
  if (contentLength !== null) lines.push(`Content-Length: ${contentLength}`);
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), body]);
}

/** Each answer: not a 5xx; a 4xx is JSON {error:{code,message}}. */
function expectWellFormed(a: RawAnswer): void {
  for (const r of a.responses) {
    expect(r.status, r.body).toBeLessThan(500);
    if (r.status >= 400) {
      expect(r.headers['content-type']).toMatch(/^application\/json/);
      expect(JSON.parse(r.body)).toEqual({ error: { code: expect.any(String), message: expect.any(String) } });
    }
  }
}

/** The exchange changed nothing when nothing was accepted. */
async function expectNothingStoredUnlessAccepted(a: RawAnswer, before: Awaited<ReturnType<typeof charged>>): Promise<void> {
  if (a.responses.some((r) => r.status === 202)) return;
  // A refusal stored under an Idempotency-Key (402/404/409 are kept for replays) is the one row allowed.
  const after = await charged();
  expect({ credits: after.credits, generations: after.generations }).toEqual({ credits: before.credits, generations: before.generations });
}

describe('hostile headers', () => {
  it('Idempotency-Key of every length and byte: a key of 1-255 printable characters is honoured, anything else refused in words', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ minLength: 0, maxLength: 400 }), async (bytes) => {
        const before = await charged();
        const a = await rawTlsExchange(svc.port, ca, request([`Idempotency-Key: ${Buffer.from(bytes).toString('latin1')}`]));
        expectWellFormed(a);
        expect(a.silent).toBe(false);
        await expectNothingStoredUnlessAccepted(a, before);
        // HTTP trims only spaces and tabs around a value (RFC 9110 OWS); JS trim() also drops \v, \f and NBSP, which make a key unprintable.
        const value = Buffer.from(bytes).toString('latin1').replace(/^[ \t]+|[ \t]+$/g, '');
        const printable = value.length >= 1 && value.length <= 255 && /^[\x20-\x7e]+$/.test(value) && !bytes.includes(13) && !bytes.includes(10);
        if (printable) expect(a.responses[0]!.status).toBe(202);
      }),
      { numRuns: RUNS },
    );
  });

  it('a Content-Length that lies (too long, too short, not a number, doubled, with chunked): refused or cut, nothing charged', async () => {
    const cases = fc.oneof(
      fc.integer({ min: BODY.length + 1, max: BODY.length + 50 }).map((n) => ({ bytes: request([], BODY, n), endWrite: true })),
      fc.integer({ min: 0, max: BODY.length - 1 }).map((n) => ({ bytes: request([], BODY, n), endWrite: false })),
      fc.constantFrom('-1', 'abc', '1e3', '99999999999999999999', ' 12', '0x10', '').map((v) => ({ bytes: request([`Content-Length: ${v}`], BODY, null), endWrite: false })),
      fc.constant({ bytes: request([`Content-Length: ${BODY.length}`], BODY, BODY.length + 1), endWrite: false }),
      fc.constant({ bytes: request(['Transfer-Encoding: chunked'], Buffer.from(`${BODY.length.toString(16)}\r\n${BODY}\r\n0\r\n\r\n`)), endWrite: false }),
    );
    await fc.assert(
      fc.asyncProperty(cases, async ({ bytes, endWrite }) => {
        const before = await charged();
        const a = await rawTlsExchange(svc.port, ca, bytes, { endWrite, idleMs: 1000 });
        expectWellFormed(a);
        // A body cut short by a Content-Length that is too small is not JSON: refused.
        expect(a.responses.filter((r) => r.status === 202)).toEqual([]);
        await expectNothingStoredUnlessAccepted(a, before);
      }),
      { numRuns: RUNS / 2 },
    );
  });

  it('a single-valued header sent twice (Authorization, Content-Type, Idempotency-Key, Host) is refused with 400, nothing charged', async () => {
    const doubled = fc.constantFrom<string[]>(
      [`Authorization: Bearer ${otherKey}`],
      ['Content-Type: text/plain'],
      ['Content-Type: application/json'],
      ['Idempotency-Key: one', 'Idempotency-Key: two'],
      ['Host: elsewhere.example'],
    );
    await fc.assert(
      fc.asyncProperty(doubled, async (extra) => {
        const before = await charged();
        const a = await rawTlsExchange(svc.port, ca, request(extra));
        expectWellFormed(a);
        expect(a.responses[0]!.status).toBe(400);
        expect(JSON.parse(a.responses[0]!.body).error.message).toMatch(/must be sent once|malformed/);
        expect(await charged()).toEqual(before);
      }),
      { numRuns: 10 },
    );
  });

  it('headers too large are answered 431 in the error shape', async () => {
    const a = await rawTlsExchange(svc.port, ca, request([`X-Padding: ${'a'.repeat(70_000)}`]));
    expectWellFormed(a);
    expect(a.responses[0]!.status).toBe(431);
  });
});
