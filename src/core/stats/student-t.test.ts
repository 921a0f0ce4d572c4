import { describe, expect, it } from 'vitest';
import { normalSf } from './normal.js';
import { studentTCdf, studentTQuantile, studentTSf, studentTTwoSided } from './student-t.js';
import { expectClose } from './__fixtures__/expect-close.js';

// Reference values: scipy 1.17.1, printed with repr(float(v)):
//   python -c "from scipy import stats; print(stats.t.sf(t, df), stats.t.cdf(t, df))"
//   python -c "from scipy import stats; print(stats.t.ppf(q, df))"
describe('Student t distribution', () => {
  it.each([
    [0.0, 5, 0.5, 0.5],
    [0.3, 3, 0.3918816460199595, 0.6081183539800405],
    [-1.2, 7.5, 0.866665538603389, 0.13333446139661093],
    [2.0, 10, 0.03669401738537018, 0.9633059826146299],
    [2.5, 2.3, 0.05666644468959923, 0.9433335553104008],
    [4.0, 30, 0.0001909228180418782, 0.9998090771819581],
    [30, 5, 3.8593243102480265e-7, 0.999999614067569],
    [1e-8, 12, 0.49999999609273693, 0.5000000039072631],
    [8, 1000.5, 1.7124983555869612e-15, 0.9999999999999983],
  ])('t=%f, df=%f: sf and cdf match scipy.stats.t', (t, df, sf, cdf) => {
    expectClose(studentTSf(t, df), sf, 1e-10);
    expectClose(studentTCdf(t, df), cdf, 1e-10);
    expectClose(studentTTwoSided(t, df), 2 * Math.min(sf, cdf), 1e-10);
  });

  it.each([
    [0.975, 1, 12.706204736174694],
    [0.975, 4.6, 2.639291609747002],
    [0.995, 12, 3.0545395893929013],
    [0.025, 30, -2.042272456301238],
    [0.9, 2.5, 1.7302509288071766],
  ])('quantile(%f, df=%f) matches scipy.stats.t.ppf', (q, df, expected) => {
    expectClose(studentTQuantile(q, df), expected, 1e-10);
  });

  it('tends to the normal as df grows, and is the normal at df = Infinity', () => {
    expectClose(studentTSf(1.5, 1e7), normalSf(1.5), 1e-6);
    expect(studentTSf(1.5, Infinity)).toBe(normalSf(1.5));
  });

  it('gives exact limits and names bad arguments', () => {
    expect(studentTTwoSided(Infinity, 3)).toBe(0);
    expect(studentTTwoSided(0, 3)).toBe(1);
    expect(studentTQuantile(0.5, 3)).toBe(0);
    expect(() => studentTSf(1, 0)).toThrow(/degrees of freedom must be > 0, got 0/);
    expect(() => studentTTwoSided(Number.NaN, 3)).toThrow(/t is NaN/);
  });
});
