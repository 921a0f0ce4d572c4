import { describe, expect, it } from 'vitest';
import { erf, erfc, normalCdf, normalQuantile, normalSf } from './normal.js';
import { expectClose } from './__fixtures__/expect-close.js';

// Reference values: scipy 1.17.1, printed with repr(float(v)):
//   python -c "from scipy import stats; print(stats.norm.cdf(z), stats.norm.sf(z))"
//   python -c "from scipy import stats; print(stats.norm.ppf(q))"
//   python -c "from scipy import special; print(special.erfc(x))"
describe('standard normal', () => {
  it.each([
    [-37, 5.7255712225239266e-300, 1.0],
    [-10, 7.61985302416047e-24, 1.0],
    [-3, 0.0013498980316300933, 0.9986501019683699],
    [-1.96, 0.024997895148220435, 0.9750021048517795],
    [-0.5, 0.3085375387259869, 0.6914624612740131],
    [0, 0.5, 0.5],
    [0.5, 0.6914624612740131, 0.3085375387259869],
    [1.2, 0.8849303297782918, 0.11506967022170822],
    [3, 0.9986501019683699, 0.0013498980316300933],
    [8, 0.9999999999999993, 6.22096057427174e-16],
  ])('Φ(%f) and 1 − Φ match scipy.stats.norm.cdf / sf, tails included', (z, cdf, sf) => {
    expectClose(normalCdf(z), cdf, 1e-12);
    expectClose(normalSf(z), sf, 1e-12);
  });

  it.each([
    [0.1, 0.8875370839817152],
    [0.5, 0.4795001221869535],
    [1, 0.15729920705028516],
    [2, 0.004677734981047266],
    [5, 1.5374597944280347e-12],
  ])('erfc(%f) matches scipy.special.erfc', (x, expected) => {
    expectClose(erfc(x), expected, 1e-13);
    expectClose(erf(x), 1 - expected, 1e-13, 1e-16);
    expectClose(erfc(-x), 2 - expected, 1e-13);
  });

  it('keeps going into the subnormal range, then underflows to 0', () => {
    // mpmath (50 digits): python -c "import mpmath as mp; print(mp.erfc(27))" -> 5.2370489237892…e-319.
    // (scipy.special.erfc flushes this to 0.) Subnormals carry few digits, hence the loose tolerance.
    expectClose(erfc(27), 5.237e-319, 1e-3);
    expect(erfc(40)).toBe(0);
  });

  it.each([
    [1e-300, -37.0470962993612],
    [1e-10, -6.361340902404056],
    [0.001, -3.090232306167813],
    [0.025, -1.9599639845400545],
    [0.3, -0.5244005127080409],
    [0.975, 1.959963984540054],
    [0.95, 1.6448536269514722],
    [0.995, 2.5758293035489004],
    [0.01, -2.3263478740408408],
    [1e-6, -4.753424308822899],
    [0.999999, 4.753424308817087],
  ])('Φ⁻¹(%f) matches scipy.stats.norm.ppf', (q, expected) => {
    expectClose(normalQuantile(q), expected, 1e-12);
  });

  it('quantile handles 0, ½, 1 and rejects p outside [0, 1]', () => {
    expect(normalQuantile(0.5)).toBe(0);
    expect(normalQuantile(0)).toBe(-Infinity);
    expect(normalQuantile(1)).toBe(Infinity);
    expect(() => normalQuantile(1.2)).toThrow(/p must be in \[0, 1\], got 1.2/);
  });
});
