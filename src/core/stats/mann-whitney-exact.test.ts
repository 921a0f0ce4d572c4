import { describe, expect, it } from 'vitest';
import {
  MANN_WHITNEY_EXACT_MAX_CELLS,
  mannWhitneyExactCounts,
  mannWhitneyExactSf,
  mannWhitneyExactSupported,
} from './mann-whitney-exact.js';
import { expectClose } from './__fixtures__/expect-close.js';

/** N(·; m, n) straight from Mann & Whitney's recursion N(u; m, n) = N(u − n; m − 1, n) + N(u; m, n − 1). */
function byRecursion(m: number, n: number): number[] {
  if (m === 0 || n === 0) return [1];
  const out = new Array<number>(m * n + 1).fill(0);
  byRecursion(m - 1, n).forEach((c, u) => (out[u + n] = (out[u + n] as number) + c));
  byRecursion(m, n - 1).forEach((c, u) => (out[u] = (out[u] as number) + c));
  return out;
}

function binomial(n: number, k: number): number {
  let c = 1;
  for (let i = 1; i <= k; i++) c = (c * (n - k + i)) / i;
  return Math.round(c);
}

describe('mannWhitneyExactCounts', () => {
  it('agrees with the recursion and sums to C(m+n, m) for every m, n ≤ 7', () => {
    for (let m = 1; m <= 7; m++) {
      for (let n = 1; n <= 7; n++) {
        const counts = mannWhitneyExactCounts(m, n);
        expect(counts, `m=${m} n=${n}`).toEqual(byRecursion(m, n));
        expect(counts.reduce((s, c) => s + c, 0)).toBe(binomial(m + n, m));
      }
    }
  });

  it('is symmetric in u and in the two sizes', () => {
    const c = mannWhitneyExactCounts(8, 5);
    expect(c).toEqual([...c].reverse());
    expect(mannWhitneyExactCounts(5, 8)).toEqual(c);
    expect(mannWhitneyExactCounts(2, 2)).toEqual([1, 1, 2, 1, 1]);
  });

  it('stays exact at the largest supported size, 8 and 367 (C(375, 8) = 8996714454741750 < 2⁵³)', () => {
    const counts = mannWhitneyExactCounts(8, 367);
    expect(counts.every((c) => Number.isSafeInteger(c) && c > 0)).toBe(true);
    expect(counts.reduce((s, c) => s + c, 0)).toBe(8996714454741750);
  });
});

describe('mannWhitneyExactSupported', () => {
  it('holds for a smaller group of at most 8 while C(m+n, m) ≤ 2⁵³ − 1 and m·n is bounded', () => {
    expect(mannWhitneyExactSupported(8, 367)).toBe(true);
    expect(mannWhitneyExactSupported(367, 8)).toBe(true);
    expect(mannWhitneyExactSupported(8, 368)).toBe(false); // C(376, 8) = 9192295203757875 > 2⁵³ − 1
    expect(mannWhitneyExactSupported(9, 9)).toBe(false);
    expect(mannWhitneyExactSupported(1, MANN_WHITNEY_EXACT_MAX_CELLS)).toBe(true);
    expect(mannWhitneyExactSupported(1, MANN_WHITNEY_EXACT_MAX_CELLS + 1)).toBe(false);
    expect(mannWhitneyExactSupported(0, 5)).toBe(false);
    expect(() => mannWhitneyExactCounts(9, 9)).toThrow(/sizes 9 and 9 are outside the exact method's range/);
  });
});

describe('mannWhitneyExactSf', () => {
  it('gives P(U ≥ u) as exact ratios, both tails and the ends', () => {
    // 3 vs 3: 20 arrangements, N = [1, 1, 2, 3, 3, 3, 3, 2, 1, 1].
    expect(mannWhitneyExactSf(9, 3, 3)).toBe(1 / 20);
    expect(mannWhitneyExactSf(0, 3, 3)).toBe(1);
    expect(mannWhitneyExactSf(1, 3, 3)).toBe(19 / 20);
    expect(mannWhitneyExactSf(5, 3, 3)).toBe(10 / 20);
    expect(mannWhitneyExactSf(10, 3, 3)).toBe(0);
    // python -c "from scipy import stats; print(repr(stats.mannwhitneyu([2.3,5.1,4.4,6.0,3.8],
    //            [1.2,2.9,3.1,0.7,4.0,1.9,2.2], alternative='greater', method='exact').pvalue))"  (U = 31)
    expectClose(mannWhitneyExactSf(31, 5, 7), 0.015151515151515152, 1e-14);
    expect(() => mannWhitneyExactSf(2.5, 3, 3)).toThrow(/U must be an integer without ties, got 2.5/);
  });
});
