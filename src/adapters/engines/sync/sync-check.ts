import type { Dispatcher } from 'undici';
import type { CheckResult } from '../../provider-check.ts';
import { freeRead, keyNotProven, notChecked } from '../../net/free-read.ts';

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

  const read = (path: string, signal: AbortSignal) => freeRead({ provider: 'sync', url: `${base}${path}`, headers: { 'x-api-key': o.apiKey }, dispatcher: o.dispatcher, signal, timeoutMs: o.timeoutMs });

  return async function check(targets: readonly string[], signal: AbortSignal): Promise<CheckResult[]> {
    const r = await read('/v2/models', signal);
    const unproven = keyNotProven(r, targets, { provider: 'sync', what: 'GET /v2/models', words });
    if (unproven || 'unreachable' in r) return unproven!;
    if (!Array.isArray(r.json)) return [{ target: 'key', outcome: 'failed', detail: 'sync answered GET /v2/models without a list of models' }, ...notChecked(targets, 'failed', 'the model list could not be read')];
    const names = r.json.map((m) => (m as { name?: unknown } | null)?.name).filter((n): n is string => typeof n === 'string');
    const key: CheckResult = { target: 'key', outcome: 'ok', detail: `the key is accepted (GET /v2/models lists ${names.length} models)` };
    return [
      key,
      ...targets.map((model): CheckResult =>
        names.includes(model)
          ? { target: model, outcome: 'ok', detail: 'listed by GET /v2/models' }
          : { target: model, outcome: 'model_gone', detail: `sync no longer lists "${model}" among the models of this key (GET /v2/models: ${names.join(', ') || 'none'})` },
      ),
    ];
  };
}
