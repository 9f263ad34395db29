import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Db } from '../db/pool.ts';
import type { Storage } from '../adapters/storage/storage.ts';
import type { FetchedImage } from './remote-images.ts';

/** Everything a service may depend on; each service narrows it with Pick<>. */
export interface Deps {
  config: Readonly<Config>;
  db: Db;
  storage: Storage;
  log: Logger;
  fetchImage: (url: string, field: string) => Promise<FetchedImage>;
}

/** Who is calling: resolved from an API key by the auth service, passed to every team-scoped call. */
export interface Principal {
  teamId: string;
  keyId: string;
}
