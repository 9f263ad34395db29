import { afterEach, describe, expect, it, vi } from 'vitest';
import { createKeyCache } from '../../src/services/key-cache.ts';

const key = (n: number) => ({ keyId: `k${n}`, teamId: `t${n}`, tier: 'starter' as const, rate: null });

describe('key cache', () => {
  afterEach(() => vi.useRealTimers());

  it('answers a key for its life and not after', () => {
    vi.useFakeTimers({ toFake: ['performance'] });
    const c = createKeyCache({ ttlMs: 1000 });
    c.set('d1', key(1));
    expect(c.get('d1')).toEqual(key(1));
    vi.advanceTimersByTime(999);
    expect(c.get('d1')).toEqual(key(1));
    vi.advanceTimersByTime(1);
    expect(c.get('d1')).toBeUndefined();
  });

  it('forgets every digest of a revoked key at once, and only those', () => {
    const c = createKeyCache();
    c.set('d1', key(1));
    c.set('d2', key(2));
    c.forgetKey('k1');
    expect(c.get('d1')).toBeUndefined();
    expect(c.get('d2')).toEqual(key(2));
    c.clear();
    expect(c.get('d2')).toBeUndefined();
  });

  it('keeps at most `max` keys, the oldest leaving first', () => {
    const c = createKeyCache({ max: 2 });
    c.set('d1', key(1));
    c.set('d2', key(2));
    c.set('d3', key(3));
    expect(c.get('d1')).toBeUndefined();
    expect(c.get('d2')).toEqual(key(2));
    expect(c.get('d3')).toEqual(key(3));
  });
});
