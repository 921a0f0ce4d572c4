import { describe, expect, it } from 'vitest';
import { pairedTTest } from './paired-t.js';
import { expectClose } from './__fixtures__/expect-close.js';

const PRE = [72, 80, 65, 90, 77, 84, 69, 75, 88, 81];
const POST = [75, 83, 66, 95, 80, 83, 74, 79, 91, 85];

// Reference values: scipy 1.17.1,
//   python -c "from scipy import stats; r = stats.ttest_rel(POST, PRE);
//              print(repr(r.statistic), r.df, repr(r.pvalue), r.confidence_interval(0.95))"
describe('pairedTTest', () => {
  it('matches scipy.stats.ttest_rel', () => {
    const r = pairedTTest(POST, PRE);
    expectClose(r.statistic, 5.196152422706631, 1e-12);
    expect(r.df).toBe(9);
    expectClose(r.pValue, 0.0005669643108945611, 1e-9);
    expectClose(r.ci.low, 1.693942953109216, 1e-9);
    expectClose(r.ci.high, 4.306057046890784, 1e-9);
    expectClose(r.estimate, 3, 1e-12);
  });

  it('is far more sensitive than an unpaired test when the pairs are correlated', async () => {
    const { welchTTest } = await import('./welch.js');
    expect(pairedTTest(POST, PRE).pValue).toBeLessThan(welchTTest(POST, PRE).pValue / 100);
  });

  it('follows scipy on constant differences: p = 0 when non-zero, NaN when zero', () => {
    // python -c "from scipy import stats; print(stats.ttest_rel([1,1,1],[0,0,0]))" -> t=inf, p=0.0
    expect(pairedTTest([1, 1, 1], [0, 0, 0]).pValue).toBe(0);
    expect(Number.isNaN(pairedTTest([2, 3], [2, 3]).pValue)).toBe(true);
  });

  it('names mismatched or short inputs', () => {
    expect(() => pairedTTest([1, 2, 3], [1, 2])).toThrow(/x has 3 values but y has 2/);
    expect(() => pairedTTest([1], [2])).toThrow(/pairedTTest: x has 1 value\(s\); at least 2 needed/);
  });
});
