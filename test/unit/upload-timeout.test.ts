import { describe, expect, it } from 'vitest';
import { SLOWEST_UPLOAD_BYTES_PER_SECOND, uploadTimeoutMs } from '../../src/adapters/engines/upload-timeout.ts';

describe('uploadTimeoutMs', () => {
  it("adds the body's time at the slowest rate waited for to the call's own limit", () => {
    expect(uploadTimeoutMs(0, 60_000)).toBe(60_000);
    expect(uploadTimeoutMs(20 * 1024 * 1024, 60_000)).toBe(60_000 + 21_000);
    // Submagic's largest video, 2 GB: more than half an hour, never cut at a minute.
    expect(uploadTimeoutMs(2_000_000_000, 120_000)).toBe(120_000 + 2_000_000);
    expect(SLOWEST_UPLOAD_BYTES_PER_SECOND).toBe(1_000_000);
  });
});
