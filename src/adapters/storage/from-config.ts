/*
 * Environment variables that feed StorageConfig (parsed by the config module, not here):
 *   STORAGE               local | s3 (default local)
 *   S3_BUCKET             bucket name (required when STORAGE=s3)
 *   S3_REGION             default us-east-1; R2 uses "auto"
 *   S3_ENDPOINT           e.g. https://<account>.r2.cloudflarestorage.com or http://minio:9000; omit for AWS
 *   S3_ACCESS_KEY_ID      required when STORAGE=s3
 *   S3_SECRET_ACCESS_KEY  required when STORAGE=s3
 *   S3_FORCE_PATH_STYLE   true for MinIO and most self-hosted servers
 * Local storage keeps files under `${dataDir}/files` and signs its links with signingSecret; with S3
 * the same secret still verifies /files links given out before the files moved to the bucket.
 */
import path from 'node:path';
import { AppError } from '../../domain/errors.ts';
import { createLocalStorage, type LocalStorage } from './local.ts';
import { createS3Storage, type S3Storage, type S3StorageOptions } from './s3.ts';

export interface StorageConfig {
  storage: 'local' | 's3';
  dataDir: string;
  publicBaseUrl: string;
  signingSecret: string;
  s3?: S3StorageOptions;
}

export const DEFAULT_S3_REGION = 'us-east-1';

/** The `kind` tells the caller whether it must also mount the local files route. */
export function createStorage(cfg: StorageConfig): LocalStorage | S3Storage {
  switch (cfg.storage) {
    case 'local':
      return createLocalStorage({
        root: path.join(cfg.dataDir, 'files'),
        publicBaseUrl: cfg.publicBaseUrl,
        signingSecret: cfg.signingSecret,
      });
    case 's3': {
      const s3 = cfg.s3;
      const missing = [
        ...(s3?.bucket ? [] : ['S3_BUCKET']),
        ...(s3?.accessKeyId ? [] : ['S3_ACCESS_KEY_ID']),
        ...(s3?.secretAccessKey ? [] : ['S3_SECRET_ACCESS_KEY']),
      ];
      if (!s3 || missing.length > 0) {
        throw new AppError('validation_error', `STORAGE=s3 needs ${missing.join(', ')}`);
      }
      return createS3Storage({ ...s3, region: s3.region || DEFAULT_S3_REGION, linkSecret: cfg.signingSecret });
    }
    default: {
      const unknown: never = cfg.storage;
      throw new AppError('validation_error', `unknown STORAGE ${JSON.stringify(unknown)} (expected local or s3)`);
    }
  }
}
