import { describe, expect, it } from 'vitest';
import { expectClose } from './__fixtures__/expect-close.js';
import { welchTTest } from './welch.js';

const A = [2.1, 3.4, 1.9, 5.6, 4.2, 3.3, 2.8, 4.9];
const B = [1.2, 2.2, 0.8, 1.9, 2.6, 1.4, 3.1];
const C = [10.1, 10.3, 9.8, 10.0, 10.2, 10.4];
const D = [8.0, 8.3, 7.9, 8.1, 8.2];

// Reference values: scipy 1.17.1,
//   python -c "from scipy import stats; r = stats.ttest_ind(A, B, equal_var=False);
//              print(repr(r.statistic), repr(r.df), repr(r.pvalue), r.confidence_interval(0.95))"
describe('welchTTest', () => {
  it('matches scipy.stats.ttest_ind(equal_var=False): t, Welch–Satterthwaite df, p, CI', () => {
    const r = welchTTest(A, B);
    expectClose(r.statistic, 2.957353907002547, 1e-12);
    expectClose(r.df, 11.867336400986995, 1e-12);
    expectClose(r.pValue, 0.012107456867052863, 1e-9);
    expectClose(r.ci.low, 0.4300526544118879, 1e-9);
    expectClose(r.ci.high, 2.8485187741595404, 1e-9);
    expectClose(r.estimate, 3.525 - 1.8857142857142857, 1e-12);
  });

  it('matches scipy for a very small p-value', () => {
    const r = welchTTest(C, D);
    expectClose(r.statistic, 17.987918650897466, 1e-12);
    expectClose(r.df, 8.89823380992431, 1e-12);
    expectClose(r.pValue, 2.654255137556151e-8, 1e-8);
  });

  it('matches scipy on the documented example and is antisymmetric', () => {
    const r = welchTTest([1, 2, 3, 4], [3, 4, 5, 6, 7]);
    expectClose(r.pValue, 0.03493878235996401, 1e-9);
    const s = welchTTest([3, 4, 5, 6, 7], [1, 2, 3, 4]);
    expect(s.statistic).toBeCloseTo(-r.statistic, 12);
    expect(s.pValue).toBeCloseTo(r.pValue, 14);
  });

  it('follows scipy on degenerate samples: constant and different → p = 0; constant and equal → NaN', () => {
    // python -c "from scipy import stats; print(stats.ttest_ind([1,1,1],[0,0,0],equal_var=False))" -> t=inf, p=0.0
    const diff = welchTTest([1, 1, 1], [0, 0, 0]);
    expect(diff.statistic).toBe(Infinity);
    expect(diff.pValue).toBe(0);
    expect(Number.isNaN(diff.df)).toBe(true);
    const same = welchTTest([1, 1, 1], [1, 1, 1]);
    expect(Number.isNaN(same.pValue)).toBe(true);
  });

  it('names the sample that is too small or not finite', () => {
    expect(() => welchTTest([1], [1, 2])).toThrow(/welchTTest: x has 1 value\(s\); at least 2 needed/);
    expect(() => welchTTest([1, 2], [1, Number.NaN])).toThrow(/y\[1\]: expected a finite number, got NaN/);
    expect(() => welchTTest(A, B, { confidence: 95 })).toThrow(/confidence must be in \(0, 1\), got 95/);
  });
});
