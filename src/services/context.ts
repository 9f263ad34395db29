import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Db } from '../db/pool.ts';
import type { Storage } from '../adapters/storage/storage.ts';
import type { FetchedImage } from './remote-images.ts';
import type { Metrics } from '../observability/metrics.ts';

/** Where a request came from: the client address as Fastify names it (TRUST_PROXY) and its User-Agent. */
export interface ClientInfo {
  ip?: string | null | undefined;
  user_agent?: string | null | undefined;
}

/** Everything a service may depend on; each service narrows it with Pick<>. */
export interface Deps {
  config: Readonly<Config>;
  db: Db;
  storage: Storage;
  log: Logger;
  /** An image URL, or with the caller's team an `upload:<id>` of it. */
  fetchImage: (url: string, field: string, teamId?: string) => Promise<FetchedImage>;
  /** Counters of what this process did (absent where nothing is measured: the admin CLI, unit tests). */
  metrics?: Metrics;
}

/**
 * Who is calling, passed to every team-scoped call: an API key (REST, GraphQL clients) or a
 * dashboard user's session (keyId null: what a session makes sends no key's webhooks).
 */
export interface Principal {
  teamId: string;
  keyId: string | null;
  userId?: string;
  /** Where the request came from, for the audit log (absent outside a request). */
  client?: ClientInfo | undefined;
}

/** A caller that came with an API key. */
export interface KeyPrincipal extends Principal {
  keyId: string;
}
