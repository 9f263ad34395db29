import { randomUUID } from 'node:crypto';
import type { Dispatcher } from 'undici';
import type { CheckResult } from '../../provider-check.ts';
import { freeRead } from '../../net/free-read.ts';
import { FAL_DEFAULT_ENDPOINTS, FAL_MODELS } from './fal-models.ts';

/*
 * `adforge providers check` for fal, with reads that cost nothing (test/contracts/fal/):
 * - the key: a status read of a request id that cannot exist (queue-status.json) on the queue the
 *   adapter submits to. fal's queue authenticates every call (https://fal.ai/docs/api-reference/
 *   inference-api, Authentication): 401 or 403 is the key refused; any other 4xx means the key got
 *   past authentication and fal merely knows no such request.
 * - each endpoint: the Platform API's model search in find mode (models-find.json,
 *   GET https://api.fal.ai/v1/models?endpoint_id=...&endpoint_id=..., up to 50 ids, no key
 *   needed): an endpoint it does not list is gone; one it lists as deprecated still runs (reported deprecated).
 */

/** fal's endpoint ids a route key of ours may send work to: one model, the ai-video operation, or `*`. */
export function falTargets(routeKey: string, overrides: Readonly<Record<string, string>>): string[] {
  const table = { ...FAL_DEFAULT_ENDPOINTS, ...overrides };
  // A model's keys: the model itself (kling-o3 as its tiers), then its input kinds (`model:image`...).
  const ofModel = (model: string) => Object.keys(table).filter((k) => (model === 'kling-o3' ? k.startsWith('kling-o3-') : k === model || k.startsWith(`${model}:`)));
  const models = (FAL_MODELS as readonly string[]).includes(routeKey) ? [routeKey] : routeKey === 'ai-video' || routeKey === '*' ? [...FAL_MODELS] : [];
  return [...new Set(models.flatMap(ofModel).map((k) => table[k]!))];
}

const SEARCH_BATCH = 50;

export function createFalCheck(o: { queueUrl: string; apiUrl: string; apiKey: string; dispatcher: Dispatcher; timeoutMs?: number }) {
  const queue = o.queueUrl.replace(/\/+$/, '');
  const api = o.apiUrl.replace(/\/+$/, '');

  const read = (url: string, headers: Record<string, string>, signal: AbortSignal) => freeRead({ provider: 'fal', url, headers, dispatcher: o.dispatcher, signal, timeoutMs: o.timeoutMs });

  // fal's own words: `detail` (a string, or pydantic-style [{msg}]), `message`, or an `error` object's message.
  const words = (r: { status: number; json: unknown }): string => {
    const j = r.json as { detail?: unknown; message?: unknown; error?: { message?: unknown } } | undefined;
    if (typeof j?.detail === 'string') return j.detail.slice(0, 300);
    if (Array.isArray(j?.detail)) return j.detail.map((d: { msg?: unknown }) => String(d?.msg ?? '')).join('; ').slice(0, 300);
    if (typeof j?.message === 'string') return j.message.slice(0, 300);
    if (typeof j?.error?.message === 'string') return j.error.message.slice(0, 300);
    return `it answered ${r.status}`;
  };

  async function checkKey(target: string | undefined, signal: AbortSignal): Promise<CheckResult> {
    const [owner, app] = (target ?? FAL_DEFAULT_ENDPOINTS['veo-3.1']!).split('/');
    const id = randomUUID();
    const r = await read(`${queue}/${owner}/${app}/requests/${id}/status?logs=0`, { authorization: `Key ${o.apiKey}` }, signal);
    if ('unreachable' in r) return { target: 'key', outcome: 'unreachable', detail: r.unreachable };
    if (r.status === 401 || r.status === 403) return { target: 'key', outcome: 'key_refused', detail: words(r) };
    if (r.status === 429 || r.status >= 500) return { target: 'key', outcome: 'unreachable', detail: `fal's queue answered ${r.status}: ${words(r)}` };
    return { target: 'key', outcome: 'ok', detail: `the queue accepted the key (a status read of a request that does not exist answered ${r.status}: ${words(r)})` };
  }

  async function checkEndpoints(targets: readonly string[], signal: AbortSignal): Promise<CheckResult[]> {
    const out: CheckResult[] = [];
    for (let i = 0; i < targets.length; i += SEARCH_BATCH) {
      const batch = targets.slice(i, i + SEARCH_BATCH);
      const search = new URLSearchParams(batch.map((t) => ['endpoint_id', t]));
      const r = await read(`${api}/models?${search}`, {}, signal);
      if ('unreachable' in r || r.status !== 200) {
        const detail = 'unreachable' in r ? r.unreachable : `fal's model search answered ${r.status}: ${words(r)}`;
        out.push(...batch.map((target): CheckResult => ({ target, outcome: 'unreachable', detail })));
        continue;
      }
      const listed = new Map<string, string>();
      for (const m of (r.json as { models?: Array<{ endpoint_id?: unknown; metadata?: { status?: unknown } }> } | undefined)?.models ?? []) {
        if (typeof m.endpoint_id === 'string') listed.set(m.endpoint_id, String(m.metadata?.status ?? 'active'));
      }
      for (const target of batch) {
        const status = listed.get(target);
        if (status === undefined) out.push({ target, outcome: 'model_gone', detail: `fal's model search does not list ${target}` });
        else out.push(status === 'deprecated' ? { target, outcome: 'deprecated', detail: 'listed, but fal marks it deprecated: plan a new route' } : { target, outcome: 'ok', detail: `listed (${status})` });
      }
    }
    return out;
  }

  return async function check(targets: readonly string[], signal: AbortSignal): Promise<CheckResult[]> {
    const [key, endpoints] = await Promise.all([checkKey(targets[0], signal), checkEndpoints(targets, signal)]);
    return [key, ...endpoints];
  };
}
