import { describe, expect, it } from 'vitest';
import { expectClose } from './__fixtures__/expect-close.js';
import { wilsonInterval } from './wilson.js';

// Reference values: statsmodels 0.15.0,
//   python -c "from statsmodels.stats.proportion import proportion_confint;
//              print(proportion_confint(k, n, 0.05, method='wilson'), proportion_confint(k, n, 0.1, method='wilson'))"
describe('wilsonInterval', () => {
  it.each([
    [7, 10, 0.39677814746114537, 0.8922087325936989, 0.44169979586983493, 0.873123416096802],
    [0, 20, 0, 0.1611251580528194, 0, 0.11915783736096455],
    [20, 20, 0.8388748419471804, 1, 0.8808421626390355, 1],
    [37, 120, 0.23272736988916298, 0.39582997723800684, 0.24385619835333927, 0.38126261286639385],
  ])('%i/%i matches statsmodels proportion_confint(method="wilson") at 95%% and 90%%', (k, n, lo95, hi95, lo90, hi90) => {
    const a = wilsonInterval(k, n);
    expectClose(a.low, lo95, 1e-10, 1e-15);
    expectClose(a.high, hi95, 1e-10, 1e-15);
    const b = wilsonInterval(k, n, 0.9);
    expectClose(b.low, lo90, 1e-10, 1e-15);
    expectClose(b.high, hi90, 1e-10, 1e-15);
    expect(a.estimate).toBe(k / n);
  });

  it('names bad counts', () => {
    expect(() => wilsonInterval(3, 0)).toThrow(/n must be a positive integer, got 0/);
    expect(() => wilsonInterval(5, 4)).toThrow(/successes must be an integer in \[0, 4\], got 5/);
    expect(() => wilsonInterval(1, 4, 1)).toThrow(/confidence must be in \(0, 1\), got 1/);
  });
});
