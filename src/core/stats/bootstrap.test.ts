import { describe, expect, it } from 'vitest';
import { Rng } from '../rng.js';
import { bootstrapMeanCi, bootstrapMeanDifferenceCi, bootstrapStatisticCi, pairedBootstrapMeanDifferenceCi } from './bootstrap.js';
import { standardDeviation } from './descriptive.js';
import { normalQuantile } from './normal.js';
import { pearson } from './pearson.js';

// A seeded resampler cannot reproduce scipy.stats.bootstrap's numpy stream, so these tests check the
// method against what the percentile bootstrap must give: exact answers on tiny enumerable cases, the
// normal-theory width on large samples, determinism per seed, and the paired/unpaired difference.
function normalSample(n: number, mu: number, sigma: number, seed: number): number[] {
  const rng = new Rng(seed);
  return Array.from({ length: n }, () => mu + sigma * normalQuantile(Math.min(1 - 1e-12, Math.max(1e-12, rng.next()))));
}

describe('bootstrap percentile intervals', () => {
  it('is deterministic per seed and changes with the seed', () => {
    const xs = normalSample(30, 0, 1, 1);
    expect(bootstrapMeanCi(xs, { seed: 3, resamples: 500 })).toEqual(bootstrapMeanCi(xs, { seed: 3, resamples: 500 }));
    expect(bootstrapMeanCi(xs, { seed: 3, resamples: 500 }).low).not.toBe(bootstrapMeanCi(xs, { seed: 4, resamples: 500 }).low);
  });

  it('on [0, 1] the resampled mean is 0, ½ or 1 with probabilities ¼, ½, ¼: the 95% interval is [0, 1]', () => {
    const ci = bootstrapMeanCi([0, 1], { resamples: 4000, seed: 1 });
    expect(ci).toMatchObject({ estimate: 0.5, low: 0, high: 1, resamples: 4000, confidence: 0.95, design: 'one-sample' });
    // At 40% coverage the 30th and 70th percentiles both fall on ½.
    const narrow = bootstrapMeanCi([0, 1], { resamples: 4000, seed: 1, confidence: 0.4 });
    expect([narrow.low, narrow.high]).toEqual([0.5, 0.5]);
  });

  it('approaches the normal-theory interval mean ± 1.96·sd/√n for a large sample', () => {
    const xs = normalSample(400, 5, 2, 11);
    const ci = bootstrapMeanCi(xs, { resamples: 4000, seed: 2 });
    const half = (1.959963984540054 * standardDeviation(xs)) / Math.sqrt(xs.length);
    expect((ci.high - ci.low) / (2 * half)).toBeGreaterThan(0.93);
    expect((ci.high - ci.low) / (2 * half)).toBeLessThan(1.07);
    expect(ci.low).toBeLessThan(ci.estimate);
    expect(ci.high).toBeGreaterThan(ci.estimate);
  });

  it('gives the degenerate interval [v, v] for a constant sample', () => {
    expect(bootstrapMeanCi([1, 1, 1], { resamples: 50 })).toMatchObject({ low: 1, high: 1 });
  });

  it('resamples each group separately for an unpaired difference', () => {
    const x = normalSample(200, 1, 1, 5);
    const y = normalSample(150, 0, 2, 6);
    const ci = bootstrapMeanDifferenceCi(x, y, { resamples: 4000, seed: 9 });
    expect(ci.design).toBe('unpaired');
    const se = Math.sqrt(standardDeviation(x) ** 2 / 200 + standardDeviation(y) ** 2 / 150);
    expect((ci.high - ci.low) / (2 * 1.96 * se)).toBeGreaterThan(0.9);
    expect((ci.high - ci.low) / (2 * 1.96 * se)).toBeLessThan(1.1);
  });

  it('keeps pairs together: with correlated pairs the paired interval is much narrower', () => {
    const base = normalSample(60, 0, 5, 21); // large between-task spread
    const noise = normalSample(60, 0, 0.5, 22);
    const x = base.map((b, i) => b + 1 + (noise[i] as number));
    const paired = pairedBootstrapMeanDifferenceCi(x, base, { seed: 1 });
    const unpaired = bootstrapMeanDifferenceCi(x, base, { seed: 1 });
    expect(paired.design).toBe('paired');
    expect(paired.high - paired.low).toBeLessThan((unpaired.high - unpaired.low) / 4);
    expect(paired.low).toBeGreaterThan(0);
    expect(unpaired.low).toBeLessThan(0);
  });

  it('names bad options and inputs', () => {
    expect(() => bootstrapMeanCi([], {})).toThrow(/bootstrapMeanCi: xs has 0 value\(s\)/);
    expect(() => bootstrapMeanCi([1], { resamples: 0 })).toThrow(/resamples must be a positive integer, got 0/);
    expect(() => bootstrapMeanCi([1], { confidence: 1.5 })).toThrow(/confidence must be in \(0, 1\), got 1.5/);
    expect(() => pairedBootstrapMeanDifferenceCi([1, 2], [1])).toThrow(/x has 2 values but y has 1/);
  });
});

describe('bootstrapStatisticCi', () => {
  it('draws the same resamples as bootstrapMeanCi when the statistic is the mean', () => {
    const xs = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3];
    const generic = bootstrapStatisticCi(xs.length, (idx) => idx.reduce((s, i) => s + xs[i]!, 0) / idx.length, { seed: 5, resamples: 300 });
    const specific = bootstrapMeanCi(xs, { seed: 5, resamples: 300 });
    expect(generic.estimate).toBeCloseTo(specific.estimate, 12);
    expect(generic.low).toBeCloseTo(specific.low, 12);
    expect(generic.high).toBeCloseTo(specific.high, 12);
    expect(generic.valid).toBe(300);
  });

  it('skips resamples whose statistic is NaN, and gives [NaN, NaN] when none is defined or n = 0', () => {
    const x = [0, 0, 0, 0, 1];
    const y = [0, 1, 0, 1, 1];
    const ci = bootstrapStatisticCi(x.length, (idx) => pearson(idx.map((i) => x[i]!), idx.map((i) => y[i]!)), { seed: 1, resamples: 200 });
    expect(ci.valid).toBeLessThan(200);
    expect(ci.valid).toBeGreaterThan(0);
    const never = bootstrapStatisticCi(3, () => Number.NaN, { resamples: 10 });
    expect([never.low, never.high, never.valid]).toEqual([Number.NaN, Number.NaN, 0]);
    const empty = bootstrapStatisticCi(0, (idx) => idx.length, { resamples: 10 });
    expect([empty.estimate, empty.low, empty.valid]).toEqual([0, Number.NaN, 0]);
  });
});
