import type { Client } from 'openapi-fetch';
import type { components, operations, paths } from './schema.d.ts';

export type { components, operations, paths };
/** The resources the API answers with: `Schemas['Generation']`, `Schemas['Product']`, ... */
export type Schemas = components['schemas'];
/** Every error: `{ error: { code, message } }`. */
export type ApiError = Schemas['Error'];

export interface AdforgeClientOptions {
  /** The service's address (scheme, host and port); the client adds /api/v1. */
  baseUrl: string;
  /** An API key, `service_sk_...`. */
  apiKey: string;
  /** A fetch to use instead of the global one (a custom CA, a proxy, a test double). */
  fetch?: (request: Request) => Promise<Response>;
  /** Headers sent with every request. */
  headers?: Record<string, string>;
}

export type AdforgeClient = Client<paths>;

export declare function createAdforgeClient(options: AdforgeClientOptions): AdforgeClient;
