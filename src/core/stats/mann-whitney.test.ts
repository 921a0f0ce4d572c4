import { describe, expect, it } from 'vitest';
import { mannWhitneyU } from './mann-whitney.js';
import { expectClose } from './__fixtures__/expect-close.js';

// Reference values: scipy 1.17.1,
//   python -c "from scipy import stats; r = stats.mannwhitneyu(x, y, alternative='two-sided',
//              method='asymptotic', use_continuity=True); print(r.statistic, repr(r.pvalue))"
describe('mannWhitneyU (normal approximation, tie + continuity corrections)', () => {
  it('matches scipy on samples with many ties', () => {
    const r = mannWhitneyU([1, 2, 2, 3, 3, 3, 4, 5, 5, 6], [2, 3, 3, 4, 4, 5, 6, 6, 7, 8, 8]);
    expect(r.u1).toBe(29);
    expect(r.u2).toBe(110 - 29);
    expect(r.method).toBe('asymptotic');
    expectClose(r.pValue, 0.06912165793359207, 1e-9);
  });

  it('matches scipy on binary outcomes (success/failure: two tie groups)', () => {
    const r = mannWhitneyU([1, 1, 1, 0, 1, 1, 0, 1], [0, 0, 1, 0, 0, 0, 1, 0, 0]);
    expect(r.u1).toBe(55);
    expect(r.method).toBe('asymptotic'); // 8 vs 9, but tied
    expectClose(r.pValue, 0.039825375499550626, 1e-9);
    expectClose(r.probabilityOfSuperiority, 55 / 72, 1e-12);
  });

  it('matches scipy on fully separated samples without ties (asymptotic forced)', () => {
    const r = mannWhitneyU([10.1, 10.3, 9.8, 10.0, 10.2, 10.4], [8.0, 8.3, 7.9, 8.1, 8.2], { method: 'asymptotic' });
    expect(r.u1).toBe(30);
    expect(r.method).toBe('asymptotic');
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

/** Samples without ties, with scipy 1.17.1's p-values for two-sided, greater, less. */
interface Case {
  x: number[];
  y: number[];
  u1: number;
  p: [number, number, number];
}

const ALTERNATIVES = ['two-sided', 'greater', 'less'] as const;

// Reference values: scipy 1.17.1, method='auto' (exact for every case here: no ties, a group of ≤ 8),
//   python -c "from scipy import stats; [print(alt, repr(stats.mannwhitneyu(x, y, alternative=alt,
//              method='auto').pvalue)) for alt in ('two-sided', 'greater', 'less')]"
// (method='exact' prints the same numbers.)
const EXACT_CASES: Record<string, Case> = {
  'U = m·n (6 vs 5, x all above)': {
    x: [10.1, 10.3, 9.8, 10.0, 10.2, 10.4],
    y: [8.0, 8.3, 7.9, 8.1, 8.2],
    u1: 30,
    p: [0.004329004329004329, 0.0021645021645021645, 1.0],
  },
  'U = m·n (3 vs 3)': { x: [1, 1.1, 1.2], y: [0, 0.1, 0.2], u1: 9, p: [0.1, 0.05, 1.0] },
  'U = 0 (4 vs 7, x all below)': {
    x: [0.1, 0.2, 0.3, 0.4],
    y: [1, 2, 3, 4, 5, 6, 7],
    u1: 0,
    p: [0.006060606060606061, 1.0, 0.0030303030303030303],
  },
  'U = m·n/2 (2 vs 2; two-sided capped at 1)': { x: [1, 4], y: [2, 3], u1: 2, p: [1.0, 0.6666666666666666, 0.6666666666666666] },
  '8 vs 8 interleaved': {
    x: [0.31, 0.77, 0.12, 0.95, 0.58, 0.66, 0.23, 0.84],
    y: [0.44, 0.05, 0.39, 0.71, 0.18, 0.27, 0.52, 0.09],
    u1: 47,
    p: [0.13038073038073036, 0.06519036519036518, 0.9475524475524476],
  },
  '5 vs 7': {
    x: [2.3, 5.1, 4.4, 6.0, 3.8],
    y: [1.2, 2.9, 3.1, 0.7, 4.0, 1.9, 2.2],
    u1: 31,
    p: [0.030303030303030304, 0.015151515151515152, 0.9911616161616161],
  },
  '1 vs 10': { x: [5.5], y: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], u1: 5, p: [1.0, 0.5454545454545455, 0.5454545454545455] },
  '8 vs 30 (only the smaller group need be ≤ 8)': {
    x: [0.746, 1.222, 0.73, -0.903, 1.305, 0.846, -0.137, 0.981],
    y: [
      0.189, -0.523, -0.413, -2.441, 1.8, 1.144, -0.325, 0.774, 0.281, -0.554, 0.978, -0.311, -0.329, -0.792, 0.455, -0.099, 0.545,
      -0.607, 0.127, -0.892, 0.841, 0.188, 0.331, 0.411, -1.011, 0.783, 2.057, -1.638, -1.729, -1.505,
    ],
    u1: 174,
    p: [0.05423453196348432, 0.02711726598174216, 0.9751756582127101],
  },
};

describe('mannWhitneyU (exact null distribution: no ties, a group of ≤ 8)', () => {
  for (const [name, c] of Object.entries(EXACT_CASES)) {
    it(`matches scipy's exact p-values: ${name}`, () => {
      ALTERNATIVES.forEach((alternative, k) => {
        const r = mannWhitneyU(c.x, c.y, { alternative });
        expect(r.u1).toBe(c.u1);
        expect(r).toMatchObject({ method: 'exact', alternative });
        expectClose(r.pValue, c.p[k] as number, 1e-13);
        expect(mannWhitneyU(c.x, c.y, { alternative, method: 'exact' }).pValue).toBe(r.pValue);
      });
    });
  }

  it('is symmetric: greater for (x, y) is less for (y, x), and two-sided does not care', () => {
    const { x, y } = EXACT_CASES['5 vs 7'] as Case;
    expect(mannWhitneyU(x, y, { alternative: 'greater' }).pValue).toBe(mannWhitneyU(y, x, { alternative: 'less' }).pValue);
    expect(mannWhitneyU(x, y, { alternative: 'less' }).pValue).toBe(mannWhitneyU(y, x, { alternative: 'greater' }).pValue);
    expect(mannWhitneyU(x, y).pValue).toBe(mannWhitneyU(y, x).pValue);
  });

  it('switches to the normal approximation when there are ties, even in small groups', () => {
    // python -c "from scipy import stats; [print(alt, repr(stats.mannwhitneyu([3,4,4,7,8], [1,2,4,5],
    //            alternative=alt).pvalue)) for alt in ('two-sided', 'greater', 'less')]"  (auto → asymptotic)
    const expected = [0.2622393495020251, 0.13111967475101255, 0.9146956275745842];
    ALTERNATIVES.forEach((alternative, k) => {
      const r = mannWhitneyU([3, 4, 4, 7, 8], [1, 2, 4, 5], { alternative });
      expect(r.u1).toBe(15);
      expect(r.method).toBe('asymptotic');
      expectClose(r.pValue, expected[k] as number, 1e-9);
    });
    expect(() => mannWhitneyU([3, 4, 4, 7, 8], [1, 2, 4, 5], { method: 'exact' })).toThrow(/method exact needs samples without ties/);
  });

  it('forced asymptotic gives scipy method=asymptotic on small samples, every alternative', () => {
    // python -c "... stats.mannwhitneyu(x, y, alternative=alt, method='asymptotic').pvalue ..." on the 5 vs 7 case
    const { x, y } = EXACT_CASES['5 vs 7'] as Case;
    const expected = [0.03475558435961616, 0.01737779217980808, 0.9885048029537675];
    ALTERNATIVES.forEach((alternative, k) => {
      const r = mannWhitneyU(x, y, { alternative, method: 'asymptotic' });
      expect(r.method).toBe('asymptotic');
      expectClose(r.pValue, expected[k] as number, 1e-9);
    });
  });

  it('stays asymptotic for two groups above 8, ties or not', () => {
    // python -c "... stats.mannwhitneyu(x, y, alternative=alt, method='auto').pvalue ..." (9 vs 12: auto → asymptotic;
    // method='exact' would give 0.5537917191167966 two-sided)
    const x = [2.841, -1.756, 1.218, 0.232, 0.347, 0.584, -1.22, 0.568, -0.065];
    const y = [-0.652, -0.175, 1.664, 0.659, -1.641, -0.005, -0.623, 0.149, -1.608, 0.242, 0.235, 1.576];
    const expected = [0.5457979706092143, 0.27289898530460716, 0.7502051917964914];
    ALTERNATIVES.forEach((alternative, k) => {
      const r = mannWhitneyU(x, y, { alternative });
      expect(r.u1).toBe(63);
      expect(r.method).toBe('asymptotic');
      expectClose(r.pValue, expected[k] as number, 1e-9);
    });
    expect(() => mannWhitneyU(x, y, { method: 'exact' })).toThrow(/method exact is not available for groups of 9 and 12/);
  });

  it('goes exact up to 8 vs 367 (C(375, 8) < 2⁵³) and asymptotic from 8 vs 368, where scipy stays exact', () => {
    // x = [i*40 + 0.5 for i in range(8)], y = list(range(n)): U₁ = 1128 for both n.
    // python -c "... stats.mannwhitneyu(x, y, alternative=alt, method='exact' | 'asymptotic').pvalue ..."
    const x = Array.from({ length: 8 }, (_, i) => i * 40 + 0.5);
    const at = mannWhitneyU(x, Array.from({ length: 367 }, (_, i) => i));
    expect(at).toMatchObject({ u1: 1128, method: 'exact' });
    expectClose(at.pValue, 0.26847286218048344, 1e-12);
    expectClose(mannWhitneyU(x, Array.from({ length: 367 }, (_, i) => i), { alternative: 'less' }).pValue, 0.13423643109024172, 1e-12);
    const beyond = mannWhitneyU(x, Array.from({ length: 368 }, (_, i) => i));
    expect(beyond).toMatchObject({ u1: 1128, method: 'asymptotic' });
    expectClose(beyond.pValue, 0.2586962337285673, 1e-9); // scipy's exact: 0.2640894157259447
  });
});
