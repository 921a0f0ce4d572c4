import { describe, expect, it } from 'vitest';
import { mean, quantileSorted, standardDeviation, standardError, sum, variance } from './descriptive.js';
import { expectClose } from './__fixtures__/expect-close.js';

// Reference values: numpy 2.4.6 in scipy's venv,
//   python -c "import numpy as np; x=[2.1,3.4,1.9,5.6,4.2,3.3,2.8,4.9]; print(np.var(x, ddof=1), np.quantile(x, 0.3))"
describe('descriptive statistics', () => {
  const x = [2.1, 3.4, 1.9, 5.6, 4.2, 3.3, 2.8, 4.9];

  it('mean, unbiased variance, sd and standard error', () => {
    expectClose(mean(x), 3.525, 1e-14);
    expectClose(variance(x), 1.7021428571428576, 1e-12);
    expectClose(standardDeviation(x), Math.sqrt(1.7021428571428576), 1e-12);
    expectClose(standardError(x), Math.sqrt(1.7021428571428576 / 8), 1e-12);
  });

  it('gives exactly 0 variance for a constant sample and a compensated sum', () => {
    expect(variance([0.1, 0.1, 0.1, 0.1])).toBe(0);
    expect(sum(Array.from({ length: 10 }, () => 0.1))).toBe(1);
  });

  it('type-7 quantiles like numpy', () => {
    const sorted = [...x].sort((a, b) => a - b);
    expectClose(quantileSorted(sorted, 0.3), 2.8499999999999996, 1e-12);
    expect(quantileSorted(sorted, 0)).toBe(1.9);
    expect(quantileSorted(sorted, 1)).toBe(5.6);
    expect(quantileSorted([1, 2, 3, 4], 0.5)).toBe(2.5);
    expect(quantileSorted([1, 2, 3, 4, 5], 0.25)).toBe(2);
  });

  it('names what is missing', () => {
    expect(() => mean([], 'rewards')).toThrow(/mean: rewards has 0 value\(s\); at least 1 needed/);
    expect(() => variance([1])).toThrow(/variance: xs has 1 value\(s\); at least 2 needed/);
    expect(() => quantileSorted([1], 2)).toThrow(/q must be in \[0, 1\], got 2/);
  });
});
