import { randomUUID } from 'node:crypto';
import type { Dispatcher } from 'undici';
import type { CheckResult } from '../../provider-check.ts';
import { freeRead, keyNotProven } from '../../net/free-read.ts';
import { HEYGEN_SWAP_TARGET, HEYGEN_TALKING_AVATAR_TARGET } from './heygen-map.ts';

/*
 * `adforge providers check` for HeyGen, with reads that cost nothing (test/contracts/heygen/):
 * GET /v3/users/me proves the key (401 authentication_failed when refused); a status read of an
 * unknown id proves each generation endpoint is still served (GET /v3/videos/{id} answers 404
 * not_found, GET /v1/workflows/executions/{id} status not_found); GET
 * /v3/video-translations/languages lists the language names localize may send.
 */
/** HeyGen's words from its error envelope {error: {code, message}}. */
const words = (r: { status: number; json: unknown }): string => {
  const e = (r.json as { error?: { code?: unknown; message?: unknown } } | undefined)?.error;
  return typeof e?.message === 'string' ? `${e.message}${typeof e.code === 'string' ? ` (${e.code})` : ''}` : `it answered ${r.status}`;
};
const errorCode = (json: unknown): unknown => (json as { error?: { code?: unknown } } | undefined)?.error?.code;

export function createHeyGenCheck(o: { baseUrl: string; apiKey: string; dispatcher: Dispatcher; timeoutMs?: number }) {
  const base = o.baseUrl.replace(/\/+$/, '');

  const read = (path: string, signal: AbortSignal) => freeRead({ provider: 'HeyGen', url: `${base}${path}`, headers: { 'x-api-key': o.apiKey }, dispatcher: o.dispatcher, signal, timeoutMs: o.timeoutMs });

  /** A status read of an id that does not exist: the endpoint answering for it is still served. */
  async function endpoint(target: string, path: string, signal: AbortSignal): Promise<CheckResult> {
    const r = await read(`${path}adforge-check-${randomUUID()}`, signal);
    if ('unreachable' in r) return { target, outcome: 'unreachable', detail: r.unreachable };
    const status = (r.json as { data?: { status?: unknown } } | undefined)?.data?.status;
    if (r.status === 200) return { target, outcome: 'ok', detail: `${path}{id} is served (an unknown id: status ${String(status)})` };
    if (r.status === 404 && errorCode(r.json) === 'not_found') return { target, outcome: 'ok', detail: `${path}{id} is served (an unknown id: ${words(r)})` };
    // A 404 outside HeyGen's error envelope, or 410: the route itself is gone.
    if (r.status === 404 || r.status === 410) return { target, outcome: 'model_gone', detail: `HeyGen no longer serves ${path}{id}: ${words(r)}` };
    if (r.status === 401 || r.status === 403) return { target, outcome: 'key_refused', detail: words(r) };
    return { target, outcome: r.status >= 500 ? 'unreachable' : 'failed', detail: `HeyGen answered ${r.status}: ${words(r)}` };
  }

  return async function check(targets: readonly string[], signal: AbortSignal): Promise<CheckResult[]> {
    const me = await read('/v3/users/me', signal);
    const unproven = keyNotProven(me, targets, { provider: 'HeyGen', what: 'GET /v3/users/me', words });
    if (unproven || 'unreachable' in me) return unproven!;
    const user = (me.json as { data?: { username?: unknown; billing_type?: unknown } } | undefined)?.data;
    const key: CheckResult = { target: 'key', outcome: 'ok', detail: `the key is accepted (user ${String(user?.username)}, billing ${String(user?.billing_type ?? 'unknown')})` };

    const languageNames = targets.filter((t) => t !== HEYGEN_TALKING_AVATAR_TARGET && t !== HEYGEN_SWAP_TARGET);
    const listed = languageNames.length ? await read('/v3/video-translations/languages', signal) : undefined;
    const language = (name: string): CheckResult => {
      if (!listed || 'unreachable' in listed) return { target: name, outcome: 'unreachable', detail: listed && 'unreachable' in listed ? listed.unreachable : 'not read' };
      if (listed.status !== 200) return { target: name, outcome: 'failed', detail: `HeyGen answered ${listed.status} to GET /v3/video-translations/languages: ${words(listed)}` };
      const names = (listed.json as { data?: { languages?: unknown } } | undefined)?.data?.languages;
      const list = Array.isArray(names) ? names : [];
      return list.includes(name)
        ? { target: name, outcome: 'ok', detail: 'listed by GET /v3/video-translations/languages' }
        : { target: name, outcome: 'model_gone', detail: `HeyGen no longer lists "${name}" among its ${list.length} video translation languages (GET /v3/video-translations/languages); set HEYGEN_LANGUAGES to a name it lists` };
    };

    const results = await Promise.all(
      targets.map((t) =>
        t === HEYGEN_TALKING_AVATAR_TARGET ? endpoint(t, '/v3/videos/', signal) : t === HEYGEN_SWAP_TARGET ? endpoint(t, '/v1/workflows/executions/', signal) : Promise.resolve(language(t)),
      ),
    );
    return [key, ...results];
  };
}
