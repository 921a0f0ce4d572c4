import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { JudgeCache, judgeCacheKey, type JudgeCacheKeyParts } from './cache.js';
import { parseJudgeConfig } from './config.js';
import { BUILTIN_JUDGE_RUBRICS } from '../rubrics.js';
import { Semaphore } from './semaphore.js';
import { UsageMeter } from './usage.js';

const dir = mkdtempSync(join(tmpdir(), 'gymflow-judge-plumbing-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

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

  it('names the cachePath it cannot read or write', async () => {
    const folder = join(dir, 'a-folder');
    mkdirSync(folder);
    await expect(new JudgeCache(folder).get('k')).rejects.toThrow(`judge cachePath ${folder}: cannot read it (EISDIR`);
    const underFile = join(dir, 'sub', 'cache.jsonl', 'x.jsonl'); // its parent is a file
    const cache = new JudgeCache(underFile);
    await expect(cache.set('k', { a: { score: 1 } }, { provider: 'p', model: 'm' })).rejects.toThrow(`judge cachePath ${underFile}: cannot read it (ENOTDIR`);
    // A file read once (absent then), whose folder turns into a file before the first write.
    const appendOnly = new JudgeCache(join(folder, 'new.jsonl'));
    await appendOnly.get('k');
    rmSync(folder, { recursive: true });
    writeFileSync(folder, 'now a file');
    await expect(appendOnly.set('k', { a: { score: 1 } }, { provider: 'p', model: 'm' })).rejects.toThrow(`judge cachePath ${join(folder, 'new.jsonl')}: cannot write to it`);
  });

  it('takes only an http(s) base URL', () => {
    expect(() => parseJudgeConfig({ provider: 'openai', model: 'm', baseURL: 'localhost:8000' }, 'j.json')).toThrow('j.json $.baseURL: expected an http:// or https:// URL, like http://localhost:8000/v1');
    expect(parseJudgeConfig({ provider: 'openai', model: 'm', baseURL: 'http://localhost:8000/v1' }).baseURL).toBe('http://localhost:8000/v1');
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
