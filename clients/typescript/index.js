// adforge's REST client: openapi-fetch typed by schema.d.ts, which `npm run schema` generates
// from the service's OpenAPI document. Plain JavaScript so that it runs from node_modules as is.
import createClient from 'openapi-fetch';

/**
 * @param {import('./index.d.ts').AdforgeClientOptions} options
 * @returns {import('./index.d.ts').AdforgeClient}
 */
export function createAdforgeClient({ baseUrl, apiKey, fetch, headers = {} }) {
  if (!baseUrl) throw new TypeError('createAdforgeClient: baseUrl is required (the service, e.g. https://adforge.example.com)');
  if (!apiKey) throw new TypeError('createAdforgeClient: apiKey is required (service_sk_...)');
  return createClient({
    baseUrl: new URL('/api/v1', baseUrl).href,
    headers: { ...headers, authorization: `Bearer ${apiKey}` },
    ...(fetch ? { fetch } : {}),
  });
}
