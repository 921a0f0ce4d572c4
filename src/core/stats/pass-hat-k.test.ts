import { describe, expect, it } from 'vitest';
import { expectClose } from './__fixtures__/expect-close.js';
import { meanPassHatK, passHatK, passHatKCurve } from './pass-hat-k.js';

/** C(n, k) by the multiplicative formula (exact in doubles for the small n used here). */
function choose(n: number, k: number): number {
  let r = 1;
  for (let i = 1; i <= k; i++) r = (r * (n - k + i)) / i;
  return Math.round(r);
}

describe('passHatK', () => {
  // Hand-computed: C(c, k) / C(n, k).
  it.each([
    [4, 2, 2, 1 / 6], // C(2,2)/C(4,2) = 1/6
    [5, 3, 2, 3 / 10], // C(3,2)/C(5,2) = 3/10
    [8, 6, 3, 5 / 14], // C(6,3)/C(8,3) = 20/56
    [7, 3, 1, 3 / 7], // k = 1: the success rate
    [3, 3, 3, 1], // every trial succeeded
    [10, 9, 10, 0], // one failure among n = k trials
    [4, 1, 2, 0], // c < k
    [3, 0, 1, 0],
  ])('n=%i c=%i k=%i is %f', (n, c, k, expected) => {
    expectClose(passHatK(n, c, k), expected, 1e-14, 1e-16);
  });

  it('is unbiased: over c ~ Binomial(n, p) its expectation is p^k', () => {
    const n = 6;
    for (const p of [0.3, 0.85]) {
      for (let k = 1; k <= n; k++) {
        let e = 0;
        for (let c = 0; c <= n; c++) e += choose(n, c) * p ** c * (1 - p) ** (n - c) * passHatK(n, c, k);
        expectClose(e, p ** k, 1e-12, 1e-15);
      }
    }
  });

  it('does not increase with k', () => {
    for (let c = 0; c <= 9; c++) {
      const curve = Array.from({ length: 9 }, (_, i) => passHatK(9, c, i + 1));
      for (let i = 1; i < curve.length; i++) expect(curve[i]).toBeLessThanOrEqual(curve[i - 1] as number);
    }
  });

  it('refuses fewer trials than k, and bad counts, naming the problem', () => {
    expect(() => passHatK(2, 1, 3)).toThrow(/pass\^3 needs at least 3 trials of the task, got 2/);
    expect(() => passHatK(4, 2, 0)).toThrow(/k must be a positive integer, got 0/);
    expect(() => passHatK(4, 2, 1.5)).toThrow(/k must be a positive integer, got 1.5/);
    expect(() => passHatK(4, 5, 1)).toThrow(/successes must be an integer in \[0, 4\], got 5/);
    expect(() => passHatK(4, -1, 1)).toThrow(/successes must be an integer in \[0, 4\], got -1/);
  });
});

describe('meanPassHatK', () => {
  it('averages the per-task estimates over tasks', () => {
    // (1/6 + 1 + 0) / 3
    expectClose(meanPassHatK([{ trials: 4, successes: 2 }, { trials: 4, successes: 4 }, { trials: 4, successes: 0 }], 2), 7 / 18, 1e-14);
    // Tasks may have run unequally often: (1/6 + C(3,2)/C(6,2)) / 2 = (1/6 + 1/5) / 2
    expectClose(meanPassHatK([{ trials: 4, successes: 2 }, { trials: 6, successes: 3 }], 2), 11 / 60, 1e-14);
  });

  it('refuses a task with fewer than k trials instead of leaving it out', () => {
    expect(() => meanPassHatK([{ trials: 3, successes: 1 }, { trials: 1, successes: 1 }], 2)).toThrow(
      /meanPassHatK: task 1: pass\^2 needs at least 2 trials of the task, got 1/,
    );
    expect(() => meanPassHatK([], 1)).toThrow(/no tasks/);
  });
});

describe('passHatKCurve', () => {
  const tasks = [
    { trials: 3, successes: 3 },
    { trials: 3, successes: 2 },
    { trials: 3, successes: 1 },
    { trials: 3, successes: 0 },
  ];

  it('gives pass^1..pass^kMax with intervals that resample tasks, all non-increasing in k', () => {
    const curve = passHatKCurve(tasks, 3, { seed: 7, resamples: 1000 });
    expect(curve.map((p) => p.k)).toEqual([1, 2, 3]);
    // Hand-computed: k=1 (1 + 2/3 + 1/3 + 0)/4; k=2 (1 + 1/3 + 0 + 0)/4; k=3 (1 + 0 + 0 + 0)/4.
    expectClose(curve[0]?.value as number, 1 / 2, 1e-14);
    expectClose(curve[1]?.value as number, 1 / 3, 1e-14);
    expectClose(curve[2]?.value as number, 1 / 4, 1e-14);
    for (const p of curve) {
      expect(p.low).toBeLessThanOrEqual(p.value);
      expect(p.high).toBeGreaterThanOrEqual(p.value);
      expect(p.low).toBeGreaterThanOrEqual(0);
      expect(p.high).toBeLessThanOrEqual(1);
    }
    for (let i = 1; i < curve.length; i++) {
      const [a, b] = [curve[i - 1], curve[i]] as [(typeof curve)[0], (typeof curve)[0]];
      expect(b.low).toBeLessThanOrEqual(a.low);
      expect(b.high).toBeLessThanOrEqual(a.high);
    }
    expect(passHatKCurve(tasks, 3, { seed: 7, resamples: 1000 })).toEqual(curve);
    expect(passHatKCurve(tasks, 3, { seed: 8, resamples: 1000 })).not.toEqual(curve);
  });

  it('matches the enumerable bootstrap of two tasks at 0 and 1: the 95% interval is [0, 1]', () => {
    const curve = passHatKCurve([{ trials: 2, successes: 2 }, { trials: 2, successes: 0 }], 2, { seed: 1, resamples: 4000 });
    expect(curve).toEqual([
      { k: 1, value: 0.5, low: 0, high: 1 },
      { k: 2, value: 0.5, low: 0, high: 1 },
    ]);
    // One task: nothing to resample, the interval is the estimate.
    expect(passHatKCurve([{ trials: 4, successes: 2 }], 2)).toEqual([
      { k: 1, value: 0.5, low: 0.5, high: 0.5 },
      { k: 2, value: 1 / 6, low: 1 / 6, high: 1 / 6 },
    ]);
  });

  it('names a bad kMax or a task that ran too few times', () => {
    expect(() => passHatKCurve(tasks, 0)).toThrow(/kMax must be a positive integer, got 0/);
    expect(() => passHatKCurve(tasks, 4)).toThrow(/passHatKCurve: task 0: pass\^4 needs at least 4 trials of the task, got 3/);
  });
});
