import { request, type Dispatcher } from 'undici';
import type { CheckResult } from '../../provider-check.ts';
import { readAtMost } from '../../net/read-at-most.ts';
import { errorMessage } from '../upstream-http.ts';
import { OPENAI_DEFAULT_IMAGE_MODELS, OPENAI_IMAGE_MODELS, OPENAI_VIDEO_MODELS } from './openai-map.ts';

/*
 * `adforge providers check` for OpenAI, with reads that cost nothing (test/contracts/openai/
 * models-list.json and models-retrieve.json): GET /v1/models proves the key, GET /v1/models/{model}
 * each model a route may send work to (404 model_not_found when it is gone; `shutdown_date` when
 * OpenAI has announced one).
 */

const IMAGE_OPERATIONS = ['text-to-image', 'image-edit', 'product-shots'];

/** OpenAI's model names a route key of ours may send work to. */
export function openaiTargets(routeKey: string, imageModels: Readonly<Record<string, string>>): string[] {
  const imageModel = (m: string) => imageModels[m] ?? OPENAI_DEFAULT_IMAGE_MODELS[m]!;
  const images = [...new Set(OPENAI_IMAGE_MODELS.map(imageModel))];
  if ((OPENAI_VIDEO_MODELS as readonly string[]).includes(routeKey)) return [routeKey];
  if ((OPENAI_IMAGE_MODELS as readonly string[]).includes(routeKey)) return [imageModel(routeKey)];
  if (routeKey === 'ai-video') return [...OPENAI_VIDEO_MODELS];
  if (IMAGE_OPERATIONS.includes(routeKey)) return images;
  if (routeKey === '*') return [...images, ...OPENAI_VIDEO_MODELS];
  return [];
}

type Read = { status: number; json: unknown } | { unreachable: string };

export function createOpenAiCheck(o: { baseUrl: string; apiKey: string; dispatcher: Dispatcher; timeoutMs?: number; today?: () => string }) {
  const base = o.baseUrl.replace(/\/+$/, '');
  const today = o.today ?? (() => new Date().toISOString().slice(0, 10));

  async function read(path: string, signal: AbortSignal): Promise<Read> {
    try {
      const res = await request(`${base}${path}`, {
        method: 'GET',
        dispatcher: o.dispatcher,
        headers: { authorization: `Bearer ${o.apiKey}` },
        signal: AbortSignal.any([signal, AbortSignal.timeout(o.timeoutMs ?? 15_000)]),
      });
      const raw = await readAtMost(res.body, 16 * 1024 * 1024, () => new Error('OpenAI answered with too much data'));
      let json: unknown;
      try {
        json = JSON.parse(raw.toString('utf8'));
      } catch {
        json = undefined;
      }
      return { status: res.statusCode, json };
    } catch (e) {
      return { unreachable: `OpenAI could not be reached: ${(e as Error).message}` };
    }
  }

  const words = (r: { status: number; json: unknown }) => errorMessage(r.json) ?? `it answered ${r.status}`;

  async function checkModel(model: string, signal: AbortSignal): Promise<CheckResult> {
    const r = await read(`/models/${encodeURIComponent(model)}`, signal);
    if ('unreachable' in r) return { target: model, outcome: 'unreachable', detail: r.unreachable };
    if (r.status === 200) {
      const shutdown = (r.json as { shutdown_date?: unknown } | undefined)?.shutdown_date;
      if (typeof shutdown === 'string' && shutdown <= today()) return { target: model, outcome: 'retired', detail: `OpenAI lists ${model} with shutdown_date ${shutdown}` };
      return { target: model, outcome: 'ok', detail: typeof shutdown === 'string' ? `listed; OpenAI shuts it down on ${shutdown}` : 'listed' };
    }
    if (r.status === 404) return { target: model, outcome: 'model_gone', detail: words(r) };
    if (r.status === 401 || r.status === 403) return { target: model, outcome: 'key_refused', detail: words(r) };
    return { target: model, outcome: 'failed', detail: `OpenAI answered ${r.status}: ${words(r)}` };
  }

  return async function check(targets: readonly string[], signal: AbortSignal): Promise<CheckResult[]> {
    const list = await read('/models', signal);
    const notChecked = (outcome: CheckResult['outcome'], why: string): CheckResult[] => targets.map((target) => ({ target, outcome, detail: `not checked: ${why}` }));
    if ('unreachable' in list) return [{ target: 'key', outcome: 'unreachable', detail: list.unreachable }, ...notChecked('unreachable', 'OpenAI could not be reached')];
    if (list.status === 401 || list.status === 403) return [{ target: 'key', outcome: 'key_refused', detail: words(list) }, ...notChecked('key_refused', 'the key was refused')];
    if (list.status !== 200) return [{ target: 'key', outcome: 'failed', detail: `OpenAI answered ${list.status}: ${words(list)}` }, ...notChecked('failed', 'the model list could not be read')];
    const count = (list.json as { data?: unknown[] } | undefined)?.data?.length ?? 0;
    return [{ target: 'key', outcome: 'ok', detail: `the key is accepted (${count} models listed)` }, ...(await Promise.all(targets.map((t) => checkModel(t, signal))))];
  };
}
