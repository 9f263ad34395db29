import { isImageOperation } from '../../../domain/generation-types.ts';
import type { Dispatcher } from 'undici';
import type { CheckResult } from '../../provider-check.ts';
import { freeRead, keyNotProven } from '../../net/free-read.ts';
import { errorMessage } from '../upstream-http.ts';
import { OPENAI_DEFAULT_IMAGE_MODELS, OPENAI_IMAGE_MODELS, OPENAI_VIDEO_MODELS } from './openai-map.ts';

/*
 * `adforge providers check` for OpenAI, with reads that cost nothing (test/contracts/openai/
 * models-list.json and models-retrieve.json): GET /v1/models proves the key, GET /v1/models/{model}
 * each model a route may send work to (404 model_not_found when it is gone; `shutdown_date` when
 * OpenAI has announced one).
 */


/** OpenAI's model names a route key of ours may send work to. */
export function openaiTargets(routeKey: string, imageModels: Readonly<Record<string, string>>): string[] {
  const imageModel = (m: string) => imageModels[m] ?? OPENAI_DEFAULT_IMAGE_MODELS[m]!;
  const images = [...new Set(OPENAI_IMAGE_MODELS.map(imageModel))];
  if ((OPENAI_VIDEO_MODELS as readonly string[]).includes(routeKey)) return [routeKey];
  if ((OPENAI_IMAGE_MODELS as readonly string[]).includes(routeKey)) return [imageModel(routeKey)];
  if (routeKey === 'ai-video') return [...OPENAI_VIDEO_MODELS];
  if (isImageOperation(routeKey)) return images;
  if (routeKey === '*') return [...images, ...OPENAI_VIDEO_MODELS];
  return [];
}

export function createOpenAiCheck(o: { baseUrl: string; apiKey: string; dispatcher: Dispatcher; timeoutMs?: number; today?: () => string }) {
  const base = o.baseUrl.replace(/\/+$/, '');
  const today = o.today ?? (() => new Date().toISOString().slice(0, 10));

  const read = (path: string, signal: AbortSignal) => freeRead({ provider: 'OpenAI', url: `${base}${path}`, headers: { authorization: `Bearer ${o.apiKey}` }, dispatcher: o.dispatcher, signal, timeoutMs: o.timeoutMs, maxBytes: 16 * 1024 * 1024 });

  const words = (r: { status: number; json: unknown }) => errorMessage(r.json) ?? `it answered ${r.status}`;

  async function checkModel(model: string, signal: AbortSignal): Promise<CheckResult> {
    const r = await read(`/models/${encodeURIComponent(model)}`, signal);
    if ('unreachable' in r) return { target: model, outcome: 'unreachable', detail: r.unreachable };
    if (r.status === 200) {
      const shutdown = (r.json as { shutdown_date?: unknown } | undefined)?.shutdown_date;
      if (typeof shutdown === 'string' && shutdown <= today()) return { target: model, outcome: 'retired', detail: `OpenAI lists ${model} with shutdown_date ${shutdown}` };
      return typeof shutdown === 'string' ? { target: model, outcome: 'deprecated', detail: `listed; OpenAI shuts it down on ${shutdown}` } : { target: model, outcome: 'ok', detail: 'listed' };
    }
    if (r.status === 404) return { target: model, outcome: 'model_gone', detail: words(r) };
    if (r.status === 401 || r.status === 403) return { target: model, outcome: 'key_refused', detail: words(r) };
    return { target: model, outcome: 'failed', detail: `OpenAI answered ${r.status}: ${words(r)}` };
  }

  return async function check(targets: readonly string[], signal: AbortSignal): Promise<CheckResult[]> {
    const list = await read('/models', signal);
    const unproven = keyNotProven(list, targets, { provider: 'OpenAI', what: 'GET /models', words });
    if (unproven || 'unreachable' in list) return unproven!;
    const count = (list.json as { data?: unknown[] } | undefined)?.data?.length ?? 0;
    return [{ target: 'key', outcome: 'ok', detail: `the key is accepted (${count} models listed)` }, ...(await Promise.all(targets.map((t) => checkModel(t, signal))))];
  };
}
