import { describe, expect, it } from 'vitest';
import { decide, rateLimitHeaders, SCRAPE_RATE_LIMIT, type RateLimitRule } from '../../src/domain/rate-limit.ts';

const rule: RateLimitRule = { scope: 'test', limit: 3, windowSeconds: 60 };
const NOW = 1_750_000_000_000;
const ago = (ms: number) => NOW - ms;

describe('SCRAPE_RATE_LIMIT', () => {
  it('is the spec’s 3 requests per minute', () => {
    expect(SCRAPE_RATE_LIMIT).toEqual({ scope: 'ad-library-scrape', limit: 3, windowSeconds: 60 });
  });
});

describe('decide', () => {
  it('allows the first request: limit - 1 remaining, reset after one whole window', () => {
    expect(decide(rule, [], NOW)).toEqual({ allowed: true, remaining: 2, resetSeconds: 60 });
  });

  it('allows requests under the limit and counts the one being made', () => {
    expect(decide(rule, [ago(10_000)], NOW)).toEqual({ allowed: true, remaining: 1, resetSeconds: 50 });
    expect(decide(rule, [ago(30_000), ago(10_000)], NOW)).toEqual({ allowed: true, remaining: 0, resetSeconds: 30 });
  });

  it('refuses at the limit until the oldest hit leaves the window', () => {
    expect(decide(rule, [ago(57_000), ago(20_000), ago(1_000)], NOW)).toEqual({ allowed: false, retryAfterSeconds: 3 });
    expect(decide(rule, [NOW, NOW, NOW], NOW)).toEqual({ allowed: false, retryAfterSeconds: 60 });
  });

  it('ignores hits outside the window, including one exactly a window old', () => {
    expect(decide(rule, [ago(60_000), ago(61_000), ago(3_600_000)], NOW)).toEqual({ allowed: true, remaining: 2, resetSeconds: 60 });
    expect(decide(rule, [ago(60_000), ago(59_999), ago(1_000)], NOW)).toEqual({ allowed: true, remaining: 0, resetSeconds: 1 });
    expect(decide(rule, [ago(60_001), ago(59_000), ago(58_000), ago(1_000)], NOW)).toEqual({ allowed: false, retryAfterSeconds: 1 });
  });

  it('takes the hits in any order', () => {
    const hits = [ago(1_000), ago(57_000), ago(20_000)];
    expect(decide(rule, hits, NOW)).toEqual({ allowed: false, retryAfterSeconds: 3 });
    expect(decide(rule, [...hits].reverse(), NOW)).toEqual({ allowed: false, retryAfterSeconds: 3 });
    expect(decide(rule, [ago(10_000), ago(40_000)], NOW)).toEqual({ allowed: true, remaining: 0, resetSeconds: 20 });
    expect(hits).toEqual([ago(1_000), ago(57_000), ago(20_000)]); // the caller's array is left alone
  });

  it('rounds Retry-After up to whole seconds, and never below 1', () => {
    expect(decide(rule, [ago(57_001), ago(2), ago(1)], NOW)).toEqual({ allowed: false, retryAfterSeconds: 3 });
    expect(decide(rule, [ago(56_999), ago(2), ago(1)], NOW)).toEqual({ allowed: false, retryAfterSeconds: 4 });
    expect(decide(rule, [ago(59_999), ago(2), ago(1)], NOW)).toEqual({ allowed: false, retryAfterSeconds: 1 });
    expect(decide(rule, [ago(59_000), ago(2), ago(1)], NOW)).toEqual({ allowed: false, retryAfterSeconds: 1 });
    expect(decide(rule, [ago(58_999), ago(2), ago(1)], NOW)).toEqual({ allowed: false, retryAfterSeconds: 2 });
  });

  it('gives a Retry-After after which the request is allowed, and not a second sooner', () => {
    for (const hits of [
      [ago(57_000), ago(20_000), ago(1_000)],
      [ago(45_500), ago(45_400), ago(100)],
      [ago(59_999), ago(59_998), ago(59_997)],
      [ago(1), ago(0), ago(30_123)],
    ]) {
      const d = decide(rule, hits, NOW);
      if (d.allowed) throw new Error('expected a refusal');
      expect(decide(rule, hits, NOW + d.retryAfterSeconds * 1000).allowed).toBe(true);
      expect(decide(rule, hits, NOW + (d.retryAfterSeconds - 1) * 1000).allowed).toBe(false);
    }
  });

  it('waits for enough hits to leave when there are more than the limit (e.g. after the limit was lowered)', () => {
    const hits = [ago(50_000), ago(40_000), ago(30_000), ago(20_000), ago(10_000)];
    // 5 hits, limit 3: the 3rd oldest (30 s ago) must leave, in 30 s.
    expect(decide(rule, hits, NOW)).toEqual({ allowed: false, retryAfterSeconds: 30 });
    expect(decide(rule, hits, NOW + 30_000)).toEqual({ allowed: true, remaining: 0, resetSeconds: 10 });
  });

  it('follows the rule’s limit and window', () => {
    const one: RateLimitRule = { scope: 's', limit: 1, windowSeconds: 10 };
    expect(decide(one, [], NOW)).toEqual({ allowed: true, remaining: 0, resetSeconds: 10 });
    expect(decide(one, [ago(2_500)], NOW)).toEqual({ allowed: false, retryAfterSeconds: 8 });
    expect(decide(one, [ago(10_000)], NOW)).toEqual({ allowed: true, remaining: 0, resetSeconds: 10 });
    const wide: RateLimitRule = { scope: 's', limit: 100, windowSeconds: 3600 };
    expect(decide(wide, Array.from({ length: 99 }, (_, i) => ago(i * 1000)), NOW)).toEqual({ allowed: true, remaining: 0, resetSeconds: 3600 - 98 });
  });
});

describe('rateLimitHeaders', () => {
  it('describes an allowed request without Retry-After', () => {
    expect(rateLimitHeaders(rule, { allowed: true, remaining: 2, resetSeconds: 60 })).toEqual({
      'RateLimit-Limit': '3',
      'RateLimit-Remaining': '2',
      'RateLimit-Reset': '60',
      'RateLimit-Policy': '3;w=60',
    });
    expect(rateLimitHeaders(rule, { allowed: true, remaining: 0, resetSeconds: 7 })).toEqual({
      'RateLimit-Limit': '3',
      'RateLimit-Remaining': '0',
      'RateLimit-Reset': '7',
      'RateLimit-Policy': '3;w=60',
    });
  });

  it('adds Retry-After to a refusal, with nothing remaining and the reset at the same time', () => {
    expect(rateLimitHeaders(rule, { allowed: false, retryAfterSeconds: 3 })).toEqual({
      'RateLimit-Limit': '3',
      'RateLimit-Remaining': '0',
      'RateLimit-Reset': '3',
      'RateLimit-Policy': '3;w=60',
      'Retry-After': '3',
    });
  });

  it('uses the rule’s own numbers', () => {
    const r: RateLimitRule = { scope: 'x', limit: 10, windowSeconds: 1 };
    expect(rateLimitHeaders(r, decide(r, [], NOW))).toEqual({
      'RateLimit-Limit': '10',
      'RateLimit-Remaining': '9',
      'RateLimit-Reset': '1',
      'RateLimit-Policy': '10;w=1',
    });
  });

  it('gives only whole-number header values', () => {
    for (const hits of [[], [ago(123)], [ago(59_999), ago(12_345)], [ago(59_999), ago(12_345), ago(1)]]) {
      for (const v of Object.values(rateLimitHeaders(rule, decide(rule, hits, NOW)))) {
        if (v.includes(';')) continue;
        expect(v).toMatch(/^\d+$/);
      }
    }
  });
});
