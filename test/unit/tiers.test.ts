import { describe, expect, it } from 'vitest';
import { DEFAULT_CREDITS, hasApiAccess, TIERS } from '../../src/domain/tiers.ts';

describe('tiers', () => {
  it('are free, starter, pro and business, in ascending order', () => {
    expect([...TIERS]).toEqual(['free', 'starter', 'pro', 'business']);
  });

  it('give no API access to free', () => {
    expect(hasApiAccess('free')).toBe(false);
  });

  it.each(['starter', 'pro', 'business'] as const)('give API access to %s (Starter tier or above)', (tier) => {
    expect(hasApiAccess(tier)).toBe(true);
  });

  it('give default credits of 0 / 1000 / 5000 / 25000 to free / starter / pro / business', () => {
    expect(DEFAULT_CREDITS).toEqual({ free: 0, starter: 1000, pro: 5000, business: 25000 });
  });

  it('define default credits for every tier and for nothing else', () => {
    expect(Object.keys(DEFAULT_CREDITS).sort()).toEqual([...TIERS].sort());
  });

  it('never give a higher tier fewer default credits than a lower one, and all are non-negative integers', () => {
    let previous = -1;
    for (const tier of TIERS) {
      const credits = DEFAULT_CREDITS[tier];
      expect(Number.isInteger(credits)).toBe(true);
      expect(credits).toBeGreaterThanOrEqual(0);
      expect(credits).toBeGreaterThanOrEqual(previous);
      previous = credits;
    }
  });
});
