import { describe, expect, it } from 'vitest';
import { bucketHeaders, parseTierRateLimits, REQUEST_COST, takeTokens, TIER_RATE_LIMITS } from '../../src/domain/rate-limit.ts';

const rule = { perMinute: 60, burst: 10 }; // a token a second

describe('takeTokens', () => {
  it('starts full, takes by cost, refuses what it does not hold without taking anything', () => {
    let state;
    const t0 = 1_000_000;
    for (let i = 0; i < 2; i++) {
      const d = takeTokens(rule, state, REQUEST_COST.write, t0);
      expect(d).toMatchObject({ allowed: true, remaining: 10 - 5 * (i + 1) });
      state = d.state;
    }
    const refused = takeTokens(rule, state, REQUEST_COST.read, t0);
    expect(refused).toMatchObject({ allowed: false, retryAfterSeconds: 1, resetSeconds: 10 });
    expect(refused.state.tokens).toBe(0);
    // A write needs 5 tokens back: 5 s.
    expect(takeTokens(rule, refused.state, REQUEST_COST.write, t0)).toMatchObject({ allowed: false, retryAfterSeconds: 5 });
    // Exactly then it passes.
    expect(takeTokens(rule, refused.state, REQUEST_COST.write, t0 + 5000)).toMatchObject({ allowed: true, remaining: 0 });
    expect(takeTokens(rule, refused.state, REQUEST_COST.write, t0 + 4999)).toMatchObject({ allowed: false, retryAfterSeconds: 1 });
  });

  it('refills at the rate up to the burst and never beyond', () => {
    const empty = { tokens: 0, at: 0 };
    expect(takeTokens(rule, empty, 1, 3500)).toMatchObject({ allowed: true, remaining: 2 });
    expect(takeTokens(rule, empty, 1, 3_600_000)).toMatchObject({ allowed: true, remaining: 9, resetSeconds: 1 });
    expect(takeTokens(rule, { tokens: 4, at: 10_000 }, 1, 9_000).state.tokens).toBe(3); // a clock that went back adds nothing
  });

  it('a cost above the burst can never pass, and says when it would (never sooner than 1 s)', () => {
    const d = takeTokens({ perMinute: 600, burst: 3 }, undefined, 5, 0);
    expect(d).toMatchObject({ allowed: false, retryAfterSeconds: 1 });
  });
});

describe('bucketHeaders', () => {
  it('gives the IETF RateLimit fields on every answer and Retry-After on a refusal', () => {
    const ok = takeTokens(rule, undefined, 1, 0);
    expect(bucketHeaders(rule, ok)).toEqual({ 'RateLimit-Limit': '10', 'RateLimit-Policy': '10;w=10', 'RateLimit-Remaining': '9', 'RateLimit-Reset': '1' });
    const refused = takeTokens(rule, { tokens: 0.5, at: 0 }, 1, 0);
    expect(bucketHeaders(rule, refused)).toEqual({ 'RateLimit-Limit': '10', 'RateLimit-Policy': '10;w=10', 'RateLimit-Remaining': '0', 'RateLimit-Reset': '10', 'Retry-After': '1' });
  });
});

describe('parseTierRateLimits (RATE_LIMIT_TIERS)', () => {
  it('overrides the named tiers only', () => {
    expect(parseTierRateLimits(undefined)).toEqual(TIER_RATE_LIMITS);
    expect(parseTierRateLimits(' pro = 100:20 , starter=5:5')).toEqual({ ...TIER_RATE_LIMITS, pro: { perMinute: 100, burst: 20 }, starter: { perMinute: 5, burst: 5 } });
  });
  it.each(['pro', 'pro=1', 'gold=1:1', 'pro=0:5', 'pro=1:x', 'pro=1:1,,'])('refuses %j, naming the part', (text) => {
    expect(() => parseTierRateLimits(text)).toThrow(/^RATE_LIMIT_TIERS: /);
  });
});
