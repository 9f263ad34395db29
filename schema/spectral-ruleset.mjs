// The lint of schema/openapi.json (test/unit/openapi-lint.test.ts): Spectral's `spectral:oas` and
// the OWASP API Security ruleset, each rule as published except those switched off or narrowed
// below, every one with its reason.
import owaspRuleset from '@stoplight/spectral-owasp-ruleset';
import { oas } from '@stoplight/spectral-rulesets';

const owasp = /** @type {any} */ (owaspRuleset).default ?? owaspRuleset;

/** An OWASP rule as published, checked only where `given` points. */
const narrowed = (name, given) => ({ ...owasp.rules[name], given });

// What a caller sends: every request body and parameter (Spectral follows their $refs).
const sent = (type) => [
  `$.paths[*][*].requestBody..[?(@ && @.type=="${type}")]`,
  `$.paths[*][*].parameters..[?(@ && @.type=="${type}")]`,
  `$.components.parameters..[?(@ && @.type=="${type}")]`,
];

export default {
  extends: [
    [oas, 'recommended'],
    [owasp, 'recommended'],
  ],
  rules: {
    // /api/v1 sends no CORS headers: it is called by servers holding a secret key, never by a page in a browser.
    'owasp:api8:2023-define-cors-origin': 'off',
    // 401 and 403 are answered before a key's token bucket exists or is drawn, so they carry no RateLimit-*; every other 2xx and 4xx must.
    'owasp:api4:2023-rate-limit': 'off',
    'adforge:rate-limit': narrowed('owasp:api4:2023-rate-limit', "$.paths[*]..responses[?(@property.match(/^(2|4)/) && @property != '401' && @property != '403')]"),
    // Limits guard what the server accepts; an answer carries what was stored after those limits (or read from an ad source), so they are checked on requests.
    'owasp:api4:2023-string-limit': 'off',
    'adforge:string-limit': narrowed('owasp:api4:2023-string-limit', sent('string')),
    'owasp:api4:2023-array-limit': 'off',
    'adforge:array-limit': narrowed('owasp:api4:2023-array-limit', sent('array')),
    'owasp:api4:2023-integer-limit': 'off',
    'adforge:integer-limit': narrowed('owasp:api4:2023-integer-limit', sent('integer')),
  },
};
