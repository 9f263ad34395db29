import { isImageOperation } from '../../../domain/generation-types.ts';
import type { Dispatcher } from 'undici';
import type { CheckResult } from '../../provider-check.ts';
import { freeRead } from '../../net/free-read.ts';
import { GEMINI_DEFAULT_IMAGE_MODELS, GEMINI_VIDEO_MODELS } from './gemini-map.ts';
import { googleWords, isKeyRefused } from './gemini-errors.ts';

/*
 * `adforge providers check` for the Gemini API, with reads that cost nothing
 * (test/contracts/gemini/models-list.json, models-get.json): the key by listing one model
 * (GET /models?pageSize=1), then each routed model by reading it (GET /models/{model}); Google
 * answers a model it does not serve 404 NOT_FOUND.
 */


/** The Gemini models a route key of ours may send work to (one of our models, an operation, or `*`). */
export function geminiTargets(routeKey: string, imageModels: Readonly<Record<string, string>>): string[] {
  const images = (keys: string[]) => keys.map((k) => imageModels[k] ?? GEMINI_DEFAULT_IMAGE_MODELS[k]!);
  if (GEMINI_VIDEO_MODELS[routeKey]) return [GEMINI_VIDEO_MODELS[routeKey]];
  if (GEMINI_DEFAULT_IMAGE_MODELS[routeKey]) return images([routeKey]);
  const videos = Object.values(GEMINI_VIDEO_MODELS);
  const allImages = images(Object.keys(GEMINI_DEFAULT_IMAGE_MODELS));
  if (routeKey === 'ai-video') return videos;
  if (isImageOperation(routeKey)) return allImages;
  if (routeKey === '*') return [...new Set([...videos, ...allImages])];
  return [];
}

/** What each model must offer for adforge to use it. */
const methodFor = (model: string): string => (Object.values(GEMINI_VIDEO_MODELS).includes(model) || model.startsWith('veo-') ? 'predictLongRunning' : 'generateContent');

export interface GeminiCheckOptions {
  apiUrl: string;
  apiKey: string;
  dispatcher: Dispatcher;
}

export async function checkGemini(o: GeminiCheckOptions, targets: readonly string[], signal: AbortSignal): Promise<CheckResult[]> {
  const base = o.apiUrl.replace(/\/+$/, '');
  const read = (path: string) => freeRead({ provider: 'Gemini', url: `${base}${path}`, headers: { 'x-goog-api-key': o.apiKey }, dispatcher: o.dispatcher, signal, timeoutMs: 20_000, maxBytes: 1 << 20 });

  const list = await read('/models?pageSize=1');
  if ('unreachable' in list) return [{ target: 'key', outcome: 'unreachable', detail: list.unreachable }];
  if (isKeyRefused(list.status, list.json)) return [{ target: 'key', outcome: 'key_refused', detail: googleWords(list.status, list.json) }];
  if (list.status !== 200) return [{ target: 'key', outcome: list.status >= 500 ? 'unreachable' : 'failed', detail: googleWords(list.status, list.json) }];
  const results: CheckResult[] = [{ target: 'key', outcome: 'ok', detail: 'the key lists the models' }];

  for (const target of targets) {
    const got = await read(`/models/${encodeURIComponent(target)}`);
    if ('unreachable' in got) {
      results.push({ target, outcome: 'unreachable', detail: got.unreachable });
      continue;
    }
    if (got.status === 404) {
      results.push({ target, outcome: 'model_gone', detail: googleWords(got.status, got.json) });
      continue;
    }
    if (got.status !== 200) {
      results.push({ target, outcome: isKeyRefused(got.status, got.json) ? 'key_refused' : got.status >= 500 ? 'unreachable' : 'failed', detail: googleWords(got.status, got.json) });
      continue;
    }
    const model = got.json as { displayName?: unknown; supportedGenerationMethods?: unknown };
    const methods = Array.isArray(model?.supportedGenerationMethods) ? model.supportedGenerationMethods.map(String) : undefined;
    const method = methodFor(target);
    if (methods && !methods.includes(method)) {
      results.push({ target, outcome: 'model_gone', detail: `models/${target} no longer offers ${method} (it offers ${methods.join(', ') || 'nothing'})` });
      continue;
    }
    results.push({ target, outcome: 'ok', detail: typeof model?.displayName === 'string' ? `${model.displayName} (models/${target})` : `models/${target}` });
  }
  return results;
}
