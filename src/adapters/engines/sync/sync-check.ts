import type { Dispatcher } from 'undici';
import { freeRead, listingCheck } from '../../net/free-read.ts';

/*
 * `adforge providers check` for sync.so, with one read that costs nothing
 * (test/contracts/sync/list-models.json): GET /v2/models lists the models the key may use
 * (active ones; deprecated models are left out), so it proves the key (401 when refused) and tells
 * whether each model a route sends work to (lipsync-2 ...) is still there.
 */
/** sync's own words from its error body {message (a string or a list), statusCode, errorCode}. */
const words = (r: { status: number; json: unknown }): string => {
  const e = r.json as { message?: unknown; errorCode?: unknown } | undefined;
  const m = Array.isArray(e?.message) ? e.message.join('; ') : e?.message;
  return typeof m === 'string' && m ? `${m}${typeof e?.errorCode === 'string' ? ` (${e.errorCode})` : ''}` : `it answered ${r.status}`;
};

export function createSyncCheck(o: { baseUrl: string; apiKey: string; dispatcher: Dispatcher; timeoutMs?: number }) {
  const base = o.baseUrl.replace(/\/+$/, '');
  return listingCheck({
    provider: 'sync',
    what: 'GET /v2/models',
    read: (signal) => freeRead({ provider: 'sync', url: `${base}/v2/models`, headers: { 'x-api-key': o.apiKey }, dispatcher: o.dispatcher, signal, timeoutMs: o.timeoutMs }),
    words,
    noun: 'model',
    names: (json) => (Array.isArray(json) ? json.map((m) => (m as { name?: unknown } | null)?.name).filter((n): n is string => typeof n === 'string') : undefined),
    gone: (model, names) => `sync no longer lists "${model}" among the models of this key (GET /v2/models: ${names.join(', ') || 'none'})`,
  });
}
