import { appendFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { JudgeCache, judgeCacheKey, type JudgeCacheKeyParts } from './cache.js';
import { backoffDelay, retryAfterFromHeaders, RetriesExhaustedError, withRetry, type FailureInfo } from '../../core/retry.js';
import { BUILTIN_JUDGE_RUBRICS } from '../rubrics.js';
import { Semaphore } from './semaphore.js';
import { UsageMeter } from './usage.js';

const dir = mkdtempSync(join(tmpdir(), 'gymflow-judge-plumbing-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

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

describe('semaphore', () => {
  it('bounds concurrency and serves waiters in order', async () => {
    const sem = new Semaphore(2);
    let active = 0;
    let peak = 0;
    const order: number[] = [];
    const gates: (() => void)[] = [];
    const tasks = [0, 1, 2, 3, 4].map((i) =>
      sem.use(async () => {
        active++;
        peak = Math.max(peak, active);
        order.push(i);
        await new Promise<void>((resolve) => gates.push(resolve));
        active--;
      }),
    );
    while (order.length < 5) {
      await new Promise((r) => setImmediate(r));
      gates.shift()?.();
    }
    gates.forEach((g) => g());
    await Promise.all(tasks);
    expect(peak).toBe(2);
    expect(order).toEqual([0, 1, 2, 3, 4]);
    expect(sem.active).toBe(0);
    expect(() => new Semaphore(0)).toThrow(RangeError);
  });
});

describe('judge cache', () => {
  const parts: JudgeCacheKeyParts = { provider: 'anthropic', model: 'm', promptVersion: 'v1', temperature: null, rubrics: BUILTIN_JUDGE_RUBRICS, input: 'step text' };

  it('keys on provider, model, prompt version, temperature, rubric set and input', () => {
    const base = judgeCacheKey(parts);
    expect(base).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(judgeCacheKey({ ...parts, rubrics: [...BUILTIN_JUDGE_RUBRICS].reverse() })).toBe(base);
    for (const change of [
      { provider: 'openai' },
      { model: 'm2' },
      { promptVersion: 'v2' },
      { temperature: 0 },
      { input: 'step text!' },
      { rubrics: BUILTIN_JUDGE_RUBRICS.slice(1) },
      { rubrics: [{ ...BUILTIN_JUDGE_RUBRICS[0]!, description: 'reworded' }] },
    ]) {
      expect(judgeCacheKey({ ...parts, ...change })).not.toBe(base);
    }
  });

  it('persists to JSONL, reloads, lets later lines win and skips corrupt lines', async () => {
    const path = join(dir, 'sub', 'cache.jsonl');
    const a = new JudgeCache(path);
    await a.set('k1', { goalProgress: { score: 0.1 } }, { provider: 'p', model: 'm' });
    await Promise.all([a.set('k2', { goalProgress: { score: 0.2, rationale: 'r' } }, { provider: 'p', model: 'm' }), a.set('k1', { goalProgress: { score: 0.3 } }, { provider: 'p', model: 'm' })]);
    expect(readFileSync(path, 'utf8').trim().split('\n')).toHaveLength(3);
    appendFileSync(path, '{"key":"half-writ');
    const b = new JudgeCache(path);
    expect(await b.get('k1')).toEqual({ goalProgress: { score: 0.3 } });
    expect(await b.get('k2')).toEqual({ goalProgress: { score: 0.2, rationale: 'r' } });
    expect(await b.get('k3')).toBeUndefined();
    expect(b.corruptLines).toBe(1);
    expect(b.size).toBe(2);

    const missing = new JudgeCache(join(dir, 'none.jsonl'));
    expect(await missing.get('k1')).toBeUndefined();
    const mem = new JudgeCache();
    await mem.set('x', { a: { score: 1 } }, { provider: 'p', model: 'm' });
    expect(await mem.get('x')).toEqual({ a: { score: 1 } });
  });
});

describe('usage meter', () => {
  it('prices tokens per million', () => {
    const m = new UsageMeter({ inputPerMTok: 3, outputPerMTok: 15 });
    m.request();
    m.tokens(2_000_000, 100_000);
    expect(m.snapshot()).toEqual({ requests: 1, cacheHits: 0, inputTokens: 2_000_000, outputTokens: 100_000, costUsd: 7.5, failures: 0, retries: 0, repairs: 0 });
    expect(new UsageMeter().snapshot().costUsd).toBe(0);
  });
});
