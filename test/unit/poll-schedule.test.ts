import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { pollDelayMs, pollSpacingMs, retryDelayMs } from '../../src/domain/poll-schedule.ts';
import { googleRetryDelayMs } from '../../src/adapters/engines/gemini/gemini-errors.ts';

const pace = { pollMs: 5000, maxMs: 60_000, hookedMs: 300_000 };

describe('poll budgets: reads spaced at the strictest window', () => {
  it('evenly spaced reads keep every window of the budget, whatever the jobs', () => {
    const budget = [
      { requests: 10, perMs: 1000 },
      { requests: 600, perMs: 60_000 },
    ];
    expect(pollSpacingMs(budget)).toBe(100);
    expect(pollSpacingMs([{ requests: 100, perMs: 3_600_000 }])).toBe(36_000);
    // 5 a second but 3600 an hour: the hour is the stricter one.
    expect(pollSpacingMs([{ requests: 5, perMs: 1000 }, { requests: 3600, perMs: 3_600_000 }])).toBe(1000);
    for (const b of [budget, [{ requests: 7, perMs: 1000 }, { requests: 100, perMs: 3_600_000 }]]) {
      const spacing = pollSpacingMs(b);
      // Reads at 0, s, 2s, ...: a half-open window of perMs holds at most ceil(perMs / s) of them.
      for (const w of b) expect(Math.ceil(w.perMs / spacing)).toBeLessThanOrEqual(w.requests);
    }
  });

  it('every provider has a budget variable with a documented default; more than one window parses', () => {
    const c = loadConfig({ FAL_KEY: 'k', HEYGEN_API_KEY: 'k', SYNC_API_KEY: 'k', GEMINI_API_KEY: 'k', OPENAI_API_KEY: 'k', SUBMAGIC_API_KEY: 'k', COMFYUI_URL: 'http://127.0.0.1:8188' });
    expect(c.upstream.sync!.pollBudget).toEqual([
      { requests: 10, perMs: 1000 },
      { requests: 600, perMs: 60_000 },
    ]);
    expect(c.upstream.fal!.pollBudget).toEqual([{ requests: 10, perMs: 1000 }]);
    expect(c.upstream.heygen!.pollBudget).toEqual([{ requests: 5, perMs: 1000 }]);
    expect(c.upstream.gemini!.pollBudget).toEqual([{ requests: 1, perMs: 1000 }]);
    expect(c.upstream.openai!.pollBudget).toEqual([{ requests: 5, perMs: 1000 }]);
    expect(c.upstream.comfyui!.pollBudget).toEqual([{ requests: 20, perMs: 1000 }]);
    expect(loadConfig({ HEYGEN_API_KEY: 'k', HEYGEN_POLL_BUDGET: '2/1, 3000/3600' }).upstream.heygen!.pollBudget).toEqual([
      { requests: 2, perMs: 1000 },
      { requests: 3000, perMs: 3_600_000 },
    ]);
    expect(() => loadConfig({ FAL_KEY: 'k', FAL_POLL_BUDGET: '10/1,fast' })).toThrow(/FAL_POLL_BUDGET/);
    expect(() => loadConfig({ FAL_KEY: 'k', FAL_POLL_BUDGET: '0/1' })).toThrow(/FAL_POLL_BUDGET/);
  });
});

describe("a job's next look grows with its age", () => {
  it('UPSTREAM_POLL_MS while young, a tenth of its age after, capped at UPSTREAM_POLL_MAX_MS', () => {
    expect(pollDelayMs(0, pace, false)).toBe(5000);
    expect(pollDelayMs(30_000, pace, false)).toBe(5000);
    expect(pollDelayMs(120_000, pace, false)).toBe(12_000);
    expect(pollDelayMs(600_000, pace, false)).toBe(60_000);
    expect(pollDelayMs(86_400_000, pace, false)).toBe(60_000);
    let last = 0;
    for (let age = 0; age < 3_600_000; age += 7_000) {
      const d = pollDelayMs(age, pace, false);
      expect(d).toBeGreaterThanOrEqual(last);
      last = d;
    }
  });

  it('a job whose provider calls back is polled as a safety net only, at least UPSTREAM_HOOKED_POLL_MS apart (0: like any other)', () => {
    expect(pollDelayMs(0, pace, true)).toBe(300_000);
    expect(pollDelayMs(600_000, pace, true)).toBe(300_000);
    expect(pollDelayMs(120_000, { ...pace, hookedMs: 0 }, true)).toBe(12_000);
  });

  it('a failed look backs off from UPSTREAM_POLL_MS, doubling, at most a minute, never sooner than the age rule', () => {
    expect(retryDelayMs(0, 0, pace)).toBe(5000);
    expect(retryDelayMs(2, 0, pace)).toBe(20_000);
    expect(retryDelayMs(10, 0, pace)).toBe(60_000);
    expect(retryDelayMs(0, 300_000, pace)).toBe(30_000);
  });

  it('the paces are variables with their defaults', () => {
    const c = loadConfig({});
    expect([c.upstream.pollMs, c.upstream.pollMaxMs, c.upstream.hookedPollMs]).toEqual([5000, 60_000, 300_000]);
  });
});

describe("a 429's wait, as each provider gives it", () => {
  it("Google's RetryInfo.retryDelay (a Duration as JSON) in ms; anything else names no wait", () => {
    const body = (details: unknown[]) => ({ error: { code: 429, status: 'RESOURCE_EXHAUSTED', message: 'quota', details } });
    expect(googleRetryDelayMs(body([{ '@type': 'type.googleapis.com/google.rpc.QuotaFailure' }, { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '22s' }]))).toBe(22_000);
    expect(googleRetryDelayMs(body([{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '1.5s' }]))).toBe(1500);
    expect(googleRetryDelayMs(body([{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: 'soon' }]))).toBeUndefined();
    expect(googleRetryDelayMs(body([]))).toBeUndefined();
    expect(googleRetryDelayMs('not json')).toBeUndefined();
  });
});
