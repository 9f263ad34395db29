import { request } from 'undici';
import { jsonOrUndefined, readAtMost } from '../net/read-at-most.ts';
import { createSafeDispatcher, isBlockedAddressError } from '../net/safe-dispatcher.ts';
import type { CheckResult, ProviderProbe } from '../provider-check.ts';
import { CREDIT_BALANCE_PATH, TOKEN_HEADER, sourceMessage } from './meta-fields.ts';

export interface MetaAdSourceProbeOptions {
  /** The same base URL the ad source reads from, e.g. https://api.scrapecreators.com. */
  baseUrl: string;
  accessToken?: string;
  allowPrivate?: boolean;
  timeoutMs?: number;
}

const MAX_BODY_BYTES = 64 * 1024;

/**
 * `adforge providers check` for the Ad Library source: the key, proved by ScrapeCreators' credit
 * balance (GET /v1/account/credit-balance -> {creditCount}; apis.js "Get credit balance"), a read
 * that costs nothing and says how many credits are left. The source has no models to check, so
 * only `key` is reported, whatever targets are given. A key with no credits left is reported as
 * failed: every scrape would be refused (402) although the key itself is accepted.
 */
export function createMetaAdSourceProbe(opts: MetaAdSourceProbeOptions): ProviderProbe {
  const base = new URL(opts.baseUrl.endsWith('/') ? opts.baseUrl : `${opts.baseUrl}/`);
  const token = opts.accessToken || undefined;
  const timeoutMs = opts.timeoutMs ?? 15_000;
  const redact = (s: string) => (token ? s.split(token).join('[redacted]') : s);
  const key = (outcome: CheckResult['outcome'], detail: string): CheckResult[] => [{ target: 'key', outcome, detail: redact(detail) }];

  return {
    name: 'scrapecreators',
    async check(_targets, signal) {
      const timer = AbortSignal.timeout(timeoutMs);
      const dispatcher = createSafeDispatcher({ allowPrivate: opts.allowPrivate ?? false, connectTimeoutMs: Math.min(timeoutMs, 10_000) });
      try {
        const res = await request(new URL(CREDIT_BALANCE_PATH, base), {
          method: 'GET',
          headers: { accept: 'application/json', ...(token ? { [TOKEN_HEADER]: token } : {}) },
          dispatcher,
          signal: AbortSignal.any([signal, timer]),
        });
        const raw = await readAtMost(res.body, MAX_BODY_BYTES, () => new Error('the credit balance answer is too large'));
        const body = jsonOrUndefined(raw);
        const said = sourceMessage(body);
        const http = `HTTP ${res.statusCode}${said ? `: ${said}` : ''}`;
        if (res.statusCode === 401 || res.statusCode === 403) {
          return key('key_refused', token ? `the source refused the key (${http})` : `the source needs a key and none is configured (${http})`);
        }
        if (res.statusCode === 429 || res.statusCode >= 500) return key('unreachable', `the source could not answer (${http})`);
        if (res.statusCode !== 200) return key('failed', `GET /${CREDIT_BALANCE_PATH} answered ${http}`);
        const credits = typeof body === 'object' && body !== null ? (body as { creditCount?: unknown }).creditCount : undefined;
        if (typeof credits !== 'number' || !Number.isFinite(credits)) return key('failed', `GET /${CREDIT_BALANCE_PATH} answered without a creditCount`);
        if (credits <= 0) return key('failed', `the key is accepted, but it has ${credits} credits left: every scrape would be refused (402)`);
        return key('ok', `the key is accepted; ${credits} credits left`);
      } catch (e) {
        if (signal.aborted) throw signal.reason;
        if (isBlockedAddressError(e)) return key('failed', 'the source is at a private or reserved address');
        return key('unreachable', timer.aborted ? `the source did not answer within ${timeoutMs / 1000} s` : 'the source could not be reached');
      } finally {
        await dispatcher.destroy().catch(() => {});
      }
    },
  };
}
