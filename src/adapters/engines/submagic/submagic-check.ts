import type { Dispatcher } from 'undici';
import { freeRead, listingCheck } from '../../net/free-read.ts';

/*
 * `adforge providers check` for Submagic, with one read that costs nothing
 * (test/contracts/submagic/list-templates.json): GET /v1/templates, 1000 requests an hour, proves
 * the key (401 UNAUTHORIZED when refused) and lists the template names: each one SUBMAGIC_TEMPLATES
 * maps to must still be there (names are case-sensitive), or every video edit sent with it fails.
 */
/** Submagic's own words from its error body {error, message}. */
const words = (r: { status: number; json: unknown }): string => {
  const e = r.json as { error?: unknown; message?: unknown } | undefined;
  return typeof e?.message === 'string' ? `${e.message}${typeof e.error === 'string' ? ` (${e.error})` : ''}` : `it answered ${r.status}`;
};

export function createSubmagicCheck(o: { baseUrl: string; apiKey: string; dispatcher: Dispatcher; timeoutMs?: number }) {
  const base = o.baseUrl.replace(/\/+$/, '');
  return listingCheck({
    provider: 'Submagic',
    what: 'GET /v1/templates',
    read: (signal) => freeRead({ provider: 'Submagic', url: `${base}/v1/templates`, headers: { 'x-api-key': o.apiKey }, dispatcher: o.dispatcher, signal, timeoutMs: o.timeoutMs }),
    words,
    noun: 'template',
    names: (json) => {
      const listed = (json as { templates?: unknown } | undefined)?.templates;
      return Array.isArray(listed) ? listed.filter((n): n is string => typeof n === 'string') : undefined;
    },
    gone: (name) => `Submagic no longer lists the template "${name}" (GET /v1/templates; names are case-sensitive): map its caption template to a listed one in SUBMAGIC_TEMPLATES`,
  });
}
