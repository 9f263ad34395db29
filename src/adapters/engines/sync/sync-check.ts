import { request, type Dispatcher } from 'undici';
import type { CheckResult } from '../../provider-check.ts';
import { readAtMost } from '../../net/read-at-most.ts';

/*
 * `adforge providers check` for sync.so, with one read that costs nothing
 * (test/contracts/sync/list-models.json): GET /v2/models lists the models the key may use
 * (active ones; deprecated models are left out), so it proves the key (401 when refused) and tells
 * whether each model a route sends work to (lipsync-2 ...) is still there.
 */
type Read = { status: number; json: unknown } | { unreachable: string };

/** sync's own words from its error body {message (a string or a list), statusCode, errorCode}. */
const words = (r: { status: number; json: unknown }): string => {
  const e = r.json as { message?: unknown; errorCode?: unknown } | undefined;
  const m = Array.isArray(e?.message) ? e.message.join('; ') : e?.message;
  return typeof m === 'string' && m ? `${m}${typeof e?.errorCode === 'string' ? ` (${e.errorCode})` : ''}` : `it answered ${r.status}`;
};

export function createSyncCheck(o: { baseUrl: string; apiKey: string; dispatcher: Dispatcher; timeoutMs?: number }) {
  const base = o.baseUrl.replace(/\/+$/, '');

  async function read(path: string, signal: AbortSignal): Promise<Read> {
    try {
      const res = await request(`${base}${path}`, {
        method: 'GET',
        dispatcher: o.dispatcher,
        headers: { 'x-api-key': o.apiKey, accept: 'application/json' },
        signal: AbortSignal.any([signal, AbortSignal.timeout(o.timeoutMs ?? 15_000)]),
      });
      const raw = await readAtMost(res.body, 1024 * 1024, () => new Error('sync answered with too much data'));
      let json: unknown;
      try {
        json = JSON.parse(raw.toString('utf8'));
      } catch {
        json = undefined;
      }
      return { status: res.statusCode, json };
    } catch (e) {
      return { unreachable: `sync could not be reached: ${(e as Error).message}` };
    }
  }

  return async function check(targets: readonly string[], signal: AbortSignal): Promise<CheckResult[]> {
    const notChecked = (outcome: CheckResult['outcome'], why: string): CheckResult[] => targets.map((target) => ({ target, outcome, detail: `not checked: ${why}` }));
    const r = await read('/v2/models', signal);
    if ('unreachable' in r) return [{ target: 'key', outcome: 'unreachable', detail: r.unreachable }, ...notChecked('unreachable', 'sync could not be reached')];
    if (r.status === 401 || r.status === 403) return [{ target: 'key', outcome: 'key_refused', detail: words(r) }, ...notChecked('key_refused', 'the key was refused')];
    if (r.status !== 200 || !Array.isArray(r.json)) {
      return [{ target: 'key', outcome: r.status >= 500 ? 'unreachable' : 'failed', detail: `sync answered ${r.status} to GET /v2/models: ${words(r)}` }, ...notChecked('failed', 'the model list could not be read')];
    }
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
