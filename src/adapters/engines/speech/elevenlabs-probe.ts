import { request } from 'undici';
import { jsonOrUndefined, readAtMost } from '../../net/read-at-most.ts';
import { createSafeDispatcher, isBlockedAddressError } from '../../net/safe-dispatcher.ts';
import type { CheckOutcome, CheckResult, ProviderProbe } from '../../provider-check.ts';
import type { ElevenLabsEngineOptions } from './elevenlabs.ts';

/*
 * `adforge providers check` for ElevenLabs, with reads that cost nothing (contracts in
 * test/contracts/elevenlabs/):
 *   key:    GET /v1/user/subscription -> {tier, character_count, character_limit}
 *   models: GET /v1/models -> [{model_id, can_do_text_to_speech, can_do_voice_conversion, ...}]
 *   voices: GET /v1/voices/{voice_id} -> {voice_id, name}; an unknown one is voice_not_found
 * Targets are the provider's own names: the configured text-to-speech and speech-to-speech model
 * ids and the provider voice ids the catalogue maps to. A target among the configured voice ids
 * is looked up as a voice; any other as a model.
 *
 * ElevenLabs keys can be limited to some permissions; a read the key may not make answers 401
 * missing_permissions. That proves the key itself is known, so the key is reported accepted and
 * only what could not be read is reported (failed, in ElevenLabs' words).
 */

export type ElevenLabsProbeOptions = Pick<ElevenLabsEngineOptions, 'baseUrl' | 'apiKey' | 'voiceIds' | 'defaultModel' | 'stsModel' | 'allowPrivate'> & { timeoutMs: number };

const MAX_BODY_BYTES = 4 * 1024 * 1024;

/** The configured models and provider voices: what a check looks at when it is given no targets. */
export function elevenLabsTargets(opts: Pick<ElevenLabsProbeOptions, 'voiceIds' | 'defaultModel' | 'stsModel'>): string[] {
  return [...new Set([opts.defaultModel, opts.stsModel, ...Object.values(opts.voiceIds)])];
}

type Read = { status: number; body: unknown } | { unreachable: string };

export function createElevenLabsProbe(opts: ElevenLabsProbeOptions): ProviderProbe {
  const base = new URL(opts.baseUrl.endsWith('/') ? opts.baseUrl : `${opts.baseUrl}/`);
  const redact = (text: string) => (opts.apiKey ? text.split(opts.apiKey).join('[redacted]') : text);
  const catalogueOf = new Map(Object.entries(opts.voiceIds).map(([catalogue, provider]) => [provider, catalogue]));

  async function read(path: string, signal: AbortSignal): Promise<Read> {
    const timer = AbortSignal.timeout(opts.timeoutMs);
    const dispatcher = createSafeDispatcher({ allowPrivate: opts.allowPrivate, connectTimeoutMs: Math.min(opts.timeoutMs, 10_000) });
    try {
      const res = await request(new URL(path, base), { method: 'GET', headers: { 'xi-api-key': opts.apiKey, accept: 'application/json' }, dispatcher, signal: AbortSignal.any([signal, timer]) });
      const raw = await readAtMost(res.body, MAX_BODY_BYTES, () => new Error(`GET /${path} answered with more than ${MAX_BODY_BYTES / 1024 / 1024} MB`));
      const body = jsonOrUndefined(raw);
      return { status: res.statusCode, body };
    } catch (e) {
      if (signal.aborted) throw signal.reason;
      if (isBlockedAddressError(e)) return { unreachable: 'the provider is at a private or reserved address' };
      return { unreachable: timer.aborted ? `the provider did not answer within ${opts.timeoutMs / 1000} s` : 'the provider could not be reached' };
    } finally {
      await dispatcher.destroy().catch(() => {});
    }
  }

  /** ElevenLabs' own words for a refusal: `code: message` from {detail: {...}}, key redacted. */
  const words = (r: { status: number; body: unknown }): string => {
    const detail = isRecord(r.body) ? r.body.detail : undefined;
    const code = isRecord(detail) ? (str(detail.code) ?? str(detail.status)) : undefined;
    const message = isRecord(detail) ? str(detail.message) : str(detail);
    return redact(`HTTP ${r.status}${code || message ? `: ${[code, message].filter(Boolean).join(': ')}` : ''}`).slice(0, 300);
  };
  const codeOf = (r: { body: unknown }): string | undefined => {
    const detail = isRecord(r.body) ? r.body.detail : undefined;
    return isRecord(detail) ? (str(detail.code) ?? str(detail.status)) : undefined;
  };
  const notPermitted = (r: { status: number; body: unknown }) => (r.status === 401 || r.status === 403) && codeOf(r) === 'missing_permissions';
  /** An answer that is neither what was asked nor a refusal of the key: the provider's trouble, or ours. */
  const trouble = (r: Read, what: string): { outcome: CheckOutcome; detail: string } =>
    'unreachable' in r
      ? { outcome: 'unreachable', detail: r.unreachable }
      : { outcome: r.status === 429 || r.status >= 500 ? 'unreachable' : 'failed', detail: notPermitted(r) ? `cannot check ${what}: the key may not read it (${words(r)})` : `${what}: ${words(r)}` };

  async function checkKey(signal: AbortSignal): Promise<CheckResult> {
    const r = await read('v1/user/subscription', signal);
    if ('unreachable' in r) return { target: 'key', outcome: 'unreachable', detail: r.unreachable };
    if (r.status === 200 && isRecord(r.body)) {
      const { tier, character_count: used, character_limit: limit } = r.body;
      const plan = typeof used === 'number' && typeof limit === 'number' ? `; plan ${String(tier)}, ${used.toLocaleString('en-US')} of ${limit.toLocaleString('en-US')} characters used` : '';
      return { target: 'key', outcome: 'ok', detail: `the key is accepted${plan}` };
    }
    if (notPermitted(r)) return { target: 'key', outcome: 'ok', detail: `the key is accepted (it may not read the subscription: ${words(r)})` };
    if (r.status === 401 || r.status === 403) return { target: 'key', outcome: 'key_refused', detail: words(r) };
    return { target: 'key', ...trouble(r, 'GET /v1/user/subscription') };
  }

  async function checkModels(models: string[], signal: AbortSignal): Promise<CheckResult[]> {
    if (models.length === 0) return [];
    const r = await read('v1/models', signal);
    if ('unreachable' in r || r.status !== 200 || !Array.isArray(r.body)) {
      const t = 'unreachable' in r || r.status !== 200 ? trouble(r, 'the models') : { outcome: 'failed' as const, detail: 'GET /v1/models answered without a list' };
      return models.map((target) => ({ target, ...t }));
    }
    const listed = new Map(r.body.filter(isRecord).map((m) => [str(m.model_id), m]));
    return models.map((target): CheckResult => {
      const m = listed.get(target);
      if (!m) return { target, outcome: 'model_gone', detail: `GET /v1/models does not list ${target}` };
      const needs = target === opts.defaultModel ? 'can_do_text_to_speech' : target === opts.stsModel ? 'can_do_voice_conversion' : undefined;
      if (needs && m[needs] === false) return { target, outcome: 'model_gone', detail: `GET /v1/models lists ${target} with ${needs} false` };
      const max = m.maximum_text_length_per_request ?? m.max_characters_request_subscribed_user;
      return { target, outcome: 'ok', detail: `listed${typeof max === 'number' && target !== opts.stsModel ? `; at most ${max.toLocaleString('en-US')} characters a request` : ''}` };
    });
  }

  async function checkVoice(voiceId: string, signal: AbortSignal): Promise<CheckResult> {
    const r = await read(`v1/voices/${encodeURIComponent(voiceId)}`, signal);
    const catalogue = catalogueOf.get(voiceId);
    const forVoice = catalogue ? ` (catalogue voice ${catalogue})` : '';
    if (!('unreachable' in r)) {
      if (r.status === 200 && isRecord(r.body)) return { target: voiceId, outcome: 'ok', detail: `voice ${str(r.body.name) ?? voiceId}${forVoice}` };
      if (r.status === 404 || codeOf(r) === 'voice_not_found') return { target: voiceId, outcome: 'model_gone', detail: `${words(r)}${forVoice}` };
    }
    return { target: voiceId, ...trouble(r, `the voice${forVoice}`) };
  }

  return {
    name: 'elevenlabs',
    async check(targets, signal) {
      const all = targets.length > 0 ? [...new Set(targets)] : elevenLabsTargets(opts);
      const key = await checkKey(signal);
      // Nothing more can be learnt with a key the provider refuses or a provider out of reach.
      if (key.outcome !== 'ok') return [key];
      const voices = new Set(Object.values(opts.voiceIds));
      const [models, voiceResults] = await Promise.all([
        checkModels(all.filter((t) => !voices.has(t)), signal),
        Promise.all(all.filter((t) => voices.has(t)).map((v) => checkVoice(v, signal))),
      ]);
      const found = new Map([...models, ...voiceResults].map((r) => [r.target, r]));
      return [key, ...all.map((t) => found.get(t)!)];
    },
  };
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown) => (typeof v === 'string' && v.trim() ? v.trim() : undefined);
