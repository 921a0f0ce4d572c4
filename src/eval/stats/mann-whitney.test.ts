import { describe, expect, it } from 'vitest';
import { mannWhitneyU } from './mann-whitney.js';
import { expectClose } from './test-support.js';

// Reference values: scipy 1.17.1,
//   python -c "from scipy import stats; r = stats.mannwhitneyu(x, y, alternative='two-sided',
//              method='asymptotic', use_continuity=True); print(r.statistic, repr(r.pvalue))"
describe('mannWhitneyU (normal approximation, tie + continuity corrections)', () => {
  it('matches scipy on samples with many ties', () => {
    const r = mannWhitneyU([1, 2, 2, 3, 3, 3, 4, 5, 5, 6], [2, 3, 3, 4, 4, 5, 6, 6, 7, 8, 8]);
    expect(r.u1).toBe(29);
    expect(r.u2).toBe(110 - 29);
    expectClose(r.pValue, 0.06912165793359207, 1e-9);
  });

  it('matches scipy on binary outcomes (success/failure: two tie groups)', () => {
    const r = mannWhitneyU([1, 1, 1, 0, 1, 1, 0, 1], [0, 0, 1, 0, 0, 0, 1, 0, 0]);
    expect(r.u1).toBe(55);
    expectClose(r.pValue, 0.039825375499550626, 1e-9);
    expectClose(r.probabilityOfSuperiority, 55 / 72, 1e-12);
  });

  it('matches scipy on fully separated samples without ties', () => {
    const r = mannWhitneyU([10.1, 10.3, 9.8, 10.0, 10.2, 10.4], [8.0, 8.3, 7.9, 8.1, 8.2]);
    expect(r.u1).toBe(30);
    expect(r.probabilityOfSuperiority).toBe(1);
    expectClose(r.pValue, 0.00811311726556578, 1e-9);
  });

  it('is symmetric in its arguments (two-sided)', () => {
    const a = mannWhitneyU([1, 4, 4, 9], [2, 3, 5]);
    const b = mannWhitneyU([2, 3, 5], [1, 4, 4, 9]);
    expect(a.pValue).toBe(b.pValue);
    expect(a.u1).toBe(b.u2);
  });

  it('gives p = 1 when every value is tied, like scipy', () => {
    // python -c "from scipy import stats; print(stats.mannwhitneyu([1,1,1],[1,1,1],method='asymptotic'))" -> 4.5, 1.0
    const r = mannWhitneyU([1, 1, 1], [1, 1, 1]);
    expect(r.u1).toBe(4.5);
    expect(r.pValue).toBe(1);
  });

  it('names an empty or non-finite sample', () => {
    expect(() => mannWhitneyU([], [1])).toThrow(/mannWhitneyU: x has 0 value\(s\)/);
    expect(() => mannWhitneyU([1], [Infinity])).toThrow(/y\[0\]: expected a finite number, got Infinity/);
  });
});
