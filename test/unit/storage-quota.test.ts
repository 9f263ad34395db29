import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { formatBytes, parseStorageQuotas } from '../../src/domain/storage-quota.ts';

describe('STORAGE_QUOTA_TIERS', () => {
  it('reads tier=size pairs in powers of 1024; unset is no quota', () => {
    expect(parseStorageQuotas(undefined)).toEqual({});
    expect(parseStorageQuotas('free=100MB, starter=10GB,pro=1TB,business=512kb')).toEqual({ free: 100 * 1024 ** 2, starter: 10 * 1024 ** 3, pro: 1024 ** 4, business: 512 * 1024 });
    expect(loadConfig({ DATA_DIR: '/tmp/adforge-quota', STORAGE_QUOTA_TIERS: 'pro=300KB' }).storageQuotas).toEqual({ pro: 307_200 });
  });

  it('refuses an unknown tier, a missing unit, a fraction or zero, naming the pair', () => {
    for (const bad of ['gold=1GB', 'pro=100', 'pro=1.5GB', 'pro=0MB', 'pro']) {
      expect(() => parseStorageQuotas(bad), bad).toThrow(/STORAGE_QUOTA_TIERS/);
      expect(() => loadConfig({ DATA_DIR: '/tmp/adforge-quota', STORAGE_QUOTA_TIERS: bad }), bad).toThrow();
    }
  });

  it('formats sizes for messages', () => {
    expect(formatBytes(307_200)).toBe('300 KB');
    expect(formatBytes(10 * 1024 ** 3)).toBe('10 GB');
    expect(formatBytes(200_000)).toBe('195.3 KB');
    expect(formatBytes(12)).toBe('12 B');
  });
});
