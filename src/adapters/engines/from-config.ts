import type { Config } from '../../config.ts';
import { createFalEngine } from './fal/fal-engine.ts';
import { createGeminiEngine } from './gemini/gemini-engine.ts';
import { createHeyGenEngine } from './heygen/heygen-engine.ts';
import { createLocalEngine } from './local/local-engine.ts';
import { createOpenAiEngine } from './openai/openai-engine.ts';
import { createEngineRegistry, type AnyEngine, type EngineRegistry } from './registry.ts';
import { createSubmagicEngine } from './submagic/submagic-engine.ts';
import { createSyncEngine } from './sync/sync-engine.ts';

/** Every engine the config turns on, and the routes between them. An unknown engine or a missing key stops the start. */
export function buildEngines(config: Readonly<Config>, o: { allowRetired?: boolean } = {}): EngineRegistry {
  const engines: AnyEngine[] = [createLocalEngine({ delayMs: config.localEngineDelayMs })];
  const { fal } = config.upstream;
  const { openai, gemini, heygen, sync, submagic } = config.upstream;
  if (submagic) engines.push(createSubmagicEngine({ apiUrl: submagic.apiUrl, apiKey: submagic.apiKey, templates: submagic.templates, pollBudget: submagic.pollBudget, allowPrivate: config.allowPrivateNetworkUrls }));
  if (sync) engines.push(createSyncEngine({ apiUrl: sync.apiUrl, apiKey: sync.apiKey, ...(sync.webhookSecret ? { webhookSecret: sync.webhookSecret } : {}), allowPrivate: config.allowPrivateNetworkUrls }));
  if (heygen) engines.push(createHeyGenEngine({ apiUrl: heygen.apiUrl, apiKey: heygen.apiKey, languages: heygen.languages, allowPrivate: config.allowPrivateNetworkUrls }));
  if (gemini) engines.push(createGeminiEngine({ apiUrl: gemini.apiUrl, apiKey: gemini.apiKey, imageModels: gemini.imageModels, allowPrivate: config.allowPrivateNetworkUrls }));
  if (openai) engines.push(createOpenAiEngine({ baseUrl: openai.baseUrl, apiKey: openai.apiKey, imageModels: openai.imageModels, allowPrivate: config.allowPrivateNetworkUrls }));
  if (fal) engines.push(createFalEngine({ queueUrl: fal.queueUrl, apiUrl: fal.apiUrl, apiKey: fal.apiKey, jwksUrl: fal.jwksUrl, endpoints: fal.endpoints, allowPrivate: config.allowPrivateNetworkUrls }));
  return createEngineRegistry(engines, config.engineRoutes, o);
}
