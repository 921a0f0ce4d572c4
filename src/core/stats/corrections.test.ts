import { describe, expect, it } from 'vitest';
import { bonferroni, holm } from './corrections.js';
import { expectClose } from './__fixtures__/expect-close.js';

// Reference values: statsmodels 0.15.0,
//   python -c "from statsmodels.stats.multitest import multipletests;
//              print(multipletests([0.01,0.04,0.03,0.005,0.2,0.5], method='holm')[1])"   (and method='bonferroni')
describe('multiple-comparison corrections', () => {
  const ps = [0.01, 0.04, 0.03, 0.005, 0.2, 0.5];

  it('Holm matches statsmodels multipletests(method="holm")', () => {
    holm(ps).forEach((v, i) => expectClose(v, [0.05, 0.12, 0.12, 0.03, 0.4, 0.5][i] as number, 1e-12));
    // Ties and a step-down that must stay monotone: multipletests([0.02,0.02,0.001,0.8], method='holm')
    holm([0.02, 0.02, 0.001, 0.8]).forEach((v, i) => expectClose(v, [0.06, 0.06, 0.004, 0.8][i] as number, 1e-12));
  });

  it('Bonferroni matches statsmodels multipletests(method="bonferroni")', () => {
    bonferroni(ps).forEach((v, i) => expectClose(v, [0.06, 0.24, 0.18, 0.03, 1, 1][i] as number, 1e-12));
  });

  it('Holm is never larger than Bonferroni', () => {
    const h = holm(ps);
    bonferroni(ps).forEach((b, i) => expect(h[i]).toBeLessThanOrEqual(b));
  });

  it('leaves NaN entries out of the family size', () => {
    const h = holm([0.01, Number.NaN, 0.04]);
    expect(Number.isNaN(h[1])).toBe(true);
    expectClose(h[0] as number, 0.02);
    expectClose(h[2] as number, 0.04);
    expect(bonferroni([0.01, Number.NaN])).toEqual([0.01, Number.NaN]);
  });

  it('handles an empty family and names an invalid p-value', () => {
    expect(holm([])).toEqual([]);
    expect(() => holm([0.1, 1.5])).toThrow(/holm: pValues\[1\] must be in \[0, 1\] or NaN, got 1.5/);
  });
});
