import type { Dispatcher } from 'undici';
import type { CheckResult } from '../../provider-check.ts';
import { freeRead, keyNotProven, notChecked } from '../../net/free-read.ts';

/*
 * `adforge providers check` for Submagic, with one read that costs nothing
 * (test/contracts/submagic/list-templates.json): GET /v1/templates, 1000 requests an hour, proves
 * the key (401 UNAUTHORIZED when refused) and lists the template names: each one SUBMAGIC_TEMPLATES
 * maps to must still be there (names are case-sensitive), or every video edit sent with it fails.
 */
/** Submagic's own words from its error body {error, message}. */
const words = (r: { status: number; json: unknown }): string => {
  const e = r.json as { error?: unknown; message?: unknown } | undefined;
  return typeof e?.message === 'string' ? `${e.message}${typeof e.error === 'string' ? ` (${e.error})` : ''}` : `it answered ${r.status}`;
};

export function createSubmagicCheck(o: { baseUrl: string; apiKey: string; dispatcher: Dispatcher; timeoutMs?: number }) {
  const base = o.baseUrl.replace(/\/+$/, '');

  const read = (path: string, signal: AbortSignal) => freeRead({ provider: 'Submagic', url: `${base}${path}`, headers: { 'x-api-key': o.apiKey }, dispatcher: o.dispatcher, signal, timeoutMs: o.timeoutMs });

  return async function check(targets: readonly string[], signal: AbortSignal): Promise<CheckResult[]> {
    const r = await read('/v1/templates', signal);
    const unproven = keyNotProven(r, targets, { provider: 'Submagic', what: 'GET /v1/templates', words });
    if (unproven || 'unreachable' in r) return unproven!;
    const listed = (r.json as { templates?: unknown } | undefined)?.templates;
    if (!Array.isArray(listed)) return [{ target: 'key', outcome: 'failed', detail: 'Submagic answered GET /v1/templates without a list of templates' }, ...notChecked(targets, 'failed', 'the template list could not be read')];
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
