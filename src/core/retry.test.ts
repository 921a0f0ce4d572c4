import { describe, expect, it } from 'vitest';
import { backoffDelay, retryAfterFromHeaders, RetriesExhaustedError, withRetry, type FailureInfo } from './retry.js';

describe('retry', () => {
  const policy = { maxRetries: 3, baseDelayMs: 100, maxDelayMs: 1000 };

  it('backs off exponentially with equal jitter, capped, and honours retry-after', () => {
    // random() = 0 → half the exponential delay; random() = 1 → all of it.
    expect([0, 1, 2, 3, 4, 5].map((a) => backoffDelay(a, policy, undefined, () => 0))).toEqual([50, 100, 200, 400, 500, 500]);
    expect([0, 1, 2].map((a) => backoffDelay(a, policy, undefined, () => 1))).toEqual([100, 200, 400]);
    expect(backoffDelay(0, policy, 700, () => 0)).toBe(700);
    expect(backoffDelay(0, policy, 60_000, () => 0)).toBe(1000);
    expect(backoffDelay(3, policy, 10, () => 0)).toBe(400);
  });

  it('parses retry-after headers', () => {
    const h = (m: Record<string, string>) => ({ get: (k: string) => m[k] ?? null });
    expect(retryAfterFromHeaders(h({ 'retry-after-ms': '250' }))).toBe(250);
    expect(retryAfterFromHeaders(h({ 'retry-after': '2' }))).toBe(2000);
    expect(retryAfterFromHeaders(h({ 'retry-after': 'Thu, 01 Jan 2026 00:00:05 GMT' }), Date.parse('2026-01-01T00:00:00Z'))).toBe(5000);
    expect(retryAfterFromHeaders(h({}))).toBeUndefined();
  });

  it('retries retryable failures only, sleeping the backoff between attempts', async () => {
    const slept: number[] = [];
    const classify = (err: unknown): FailureInfo => ({ retryable: (err as Error).message !== 'fatal', message: (err as Error).message });
    let calls = 0;
    const value = await withRetry(
      async () => {
        calls++;
        if (calls < 3) throw new Error('flaky');
        return 'ok';
      },
      classify,
      policy,
      { sleep: async (ms) => void slept.push(ms), random: () => 0 },
    );
    expect(value).toBe('ok');
    expect(slept).toEqual([50, 100]);

    calls = 0;
    const err = await withRetry(
      async () => {
        calls++;
        throw new Error('fatal');
      },
      classify,
      policy,
      { sleep: async () => undefined },
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RetriesExhaustedError);
    expect(calls).toBe(1);

    calls = 0;
    const exhausted = await withRetry(
      async () => {
        calls++;
        throw new Error('flaky');
      },
      classify,
      policy,
      { sleep: async () => undefined },
    ).catch((e: unknown) => e);
    expect((exhausted as Error).message).toBe('flaky (gave up after 4 attempts)');
    expect(calls).toBe(4);
  });
});
