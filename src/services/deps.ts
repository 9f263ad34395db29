import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Db } from '../db/pool.ts';
import type { Storage } from '../adapters/storage/storage.ts';
import type { FetchedImage } from './remote-images.ts';
import type { Metrics } from '../observability/metrics.ts';

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
