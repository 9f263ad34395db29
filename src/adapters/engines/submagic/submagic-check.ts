import { request, type Dispatcher } from 'undici';
import type { CheckResult } from '../../provider-check.ts';
import { readAtMost } from '../../net/read-at-most.ts';

/*
 * `adforge providers check` for Submagic, with one read that costs nothing
 * (test/contracts/submagic/list-templates.json): GET /v1/templates, 1000 requests an hour, proves
 * the key (401 UNAUTHORIZED when refused) and lists the template names: each one SUBMAGIC_TEMPLATES
 * maps to must still be there (names are case-sensitive), or every video edit sent with it fails.
 */
type Read = { status: number; json: unknown } | { unreachable: string };

/** Submagic's own words from its error body {error, message}. */
const words = (r: { status: number; json: unknown }): string => {
  const e = r.json as { error?: unknown; message?: unknown } | undefined;
  return typeof e?.message === 'string' ? `${e.message}${typeof e.error === 'string' ? ` (${e.error})` : ''}` : `it answered ${r.status}`;
};

export function createSubmagicCheck(o: { baseUrl: string; apiKey: string; dispatcher: Dispatcher; timeoutMs?: number }) {
  const base = o.baseUrl.replace(/\/+$/, '');

  async function read(path: string, signal: AbortSignal): Promise<Read> {
    try {
      const res = await request(`${base}${path}`, {
        method: 'GET',
        dispatcher: o.dispatcher,
        headers: { 'x-api-key': o.apiKey, accept: 'application/json' },
        signal: AbortSignal.any([signal, AbortSignal.timeout(o.timeoutMs ?? 15_000)]),
      });
      const raw = await readAtMost(res.body, 1024 * 1024, () => new Error('Submagic answered with too much data'));
      let json: unknown;
      try {
        json = JSON.parse(raw.toString('utf8'));
      } catch {
        json = undefined;
      }
      return { status: res.statusCode, json };
    } catch (e) {
      return { unreachable: `Submagic could not be reached: ${(e as Error).message}` };
    }
  }

  return async function check(targets: readonly string[], signal: AbortSignal): Promise<CheckResult[]> {
    const notChecked = (outcome: CheckResult['outcome'], why: string): CheckResult[] => targets.map((target) => ({ target, outcome, detail: `not checked: ${why}` }));
    const r = await read('/v1/templates', signal);
    if ('unreachable' in r) return [{ target: 'key', outcome: 'unreachable', detail: r.unreachable }, ...notChecked('unreachable', 'Submagic could not be reached')];
    if (r.status === 401 || r.status === 403) return [{ target: 'key', outcome: 'key_refused', detail: words(r) }, ...notChecked('key_refused', 'the key was refused')];
    const listed = (r.json as { templates?: unknown } | undefined)?.templates;
    if (r.status !== 200 || !Array.isArray(listed)) {
      return [{ target: 'key', outcome: r.status >= 500 || r.status === 429 ? 'unreachable' : 'failed', detail: `Submagic answered ${r.status} to GET /v1/templates: ${words(r)}` }, ...notChecked('failed', 'the template list could not be read')];
    }
    const names = listed.filter((n): n is string => typeof n === 'string');
    return [
      { target: 'key', outcome: 'ok', detail: `the key is accepted (GET /v1/templates lists ${names.length} templates)` },
      ...targets.map((name): CheckResult =>
        names.includes(name)
          ? { target: name, outcome: 'ok', detail: 'listed by GET /v1/templates' }
          : { target: name, outcome: 'model_gone', detail: `Submagic no longer lists the template "${name}" (GET /v1/templates; names are case-sensitive): map its caption template to a listed one in SUBMAGIC_TEMPLATES` },
      ),
    ];
  };
}
