import { createHash, createPublicKey, verify, type KeyObject } from 'node:crypto';
import { request, type Dispatcher } from 'undici';
import { readAtMost } from '../../net/read-at-most.ts';

/*
 * fal's webhook signature, per https://docs.fal.ai/model-endpoints/webhooks ("Verifying Your
 * Webhook"): headers X-Fal-Webhook-Request-Id, -User-Id, -Timestamp (Unix seconds) and
 * -Signature (hex); the signed message is those three values and the hex SHA-256 of the raw body,
 * joined by newlines; the signature is Ed25519 under one of the keys fal publishes as a JWKS
 * (OKP / Ed25519, `x` base64url). A timestamp more than five minutes off is refused (replays).
 */
const MAX_SKEW_SECONDS = 300;
const KEYS_TTL_MS = 24 * 3600_000;
// A signature no cached key accepts refreshes the keys, at most this often (a forged flood cannot make us fetch them all day).
const MIN_REFRESH_MS = 60_000;

export function createFalHookVerifier(opts: { jwksUrl: string; dispatcher: Dispatcher; now?: () => number }) {
  const now = opts.now ?? Date.now;
  let keys: KeyObject[] = [];
  let fetchedAt = 0;

  async function refresh(): Promise<void> {
    fetchedAt = now();
    const res = await request(opts.jwksUrl, { dispatcher: opts.dispatcher, signal: AbortSignal.timeout(10_000) });
    const raw = await readAtMost(res.body, 256 * 1024, () => new Error('fal JWKS too large'));
    if (res.statusCode !== 200) throw new Error(`fal JWKS answered ${res.statusCode}`);
    const jwks = JSON.parse(raw.toString('utf8')) as { keys?: Array<Record<string, unknown>> };
    keys = (jwks.keys ?? [])
      .filter((k) => k.kty === 'OKP' && k.crv === 'Ed25519' && typeof k.x === 'string')
      .map((k) => createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: k.x as string }, format: 'jwk' }));
  }

  const header = (h: Record<string, string | string[] | undefined>, name: string): string | undefined => {
    const v = h[name];
    return Array.isArray(v) ? v[0] : v;
  };

  return async (headers: Record<string, string | string[] | undefined>, rawBody: Buffer): Promise<{ providerJobId: string } | null> => {
    const requestId = header(headers, 'x-fal-webhook-request-id');
    const userId = header(headers, 'x-fal-webhook-user-id');
    const timestamp = header(headers, 'x-fal-webhook-timestamp');
    const signature = header(headers, 'x-fal-webhook-signature');
    if (!requestId || !userId || !timestamp || !signature || !/^\d{1,12}$/.test(timestamp) || !/^[0-9a-f]+$/i.test(signature)) return null;
    if (Math.abs(now() / 1000 - Number(timestamp)) > MAX_SKEW_SECONDS) return null;
    const message = Buffer.from([requestId, userId, timestamp, createHash('sha256').update(rawBody).digest('hex')].join('\n'));
    const sig = Buffer.from(signature, 'hex');
    const accepted = () => keys.some((k) => verify(null, message, k, sig));
    // No key yet (fal's list empty, or unreachable) waits out the same minimum as a miss does.
    const since = now() - fetchedAt;
    if (since > KEYS_TTL_MS || (!keys.length && since >= MIN_REFRESH_MS)) await refresh();
    if (!accepted()) {
      if (now() - fetchedAt < MIN_REFRESH_MS) return null;
      await refresh();
      if (!accepted()) return null;
    }
    // The body must speak of the job the signed headers name.
    try {
      const body = JSON.parse(rawBody.toString('utf8')) as { request_id?: unknown };
      if (body.request_id !== requestId) return null;
    } catch {
      return null;
    }
    return { providerJobId: requestId };
  };
}
