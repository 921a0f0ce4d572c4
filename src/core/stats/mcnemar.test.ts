import { describe, expect, it } from 'vitest';
import { binomialHalfCdf, mcnemarExact } from './mcnemar.js';

/** Paired 0/1 samples with `onlyX` pairs (1, 0), `onlyY` pairs (0, 1) and `both` pairs (1, 1). */
function pairs(onlyX: number, onlyY: number, both = 0): [number[], number[]] {
  return [
    [...Array<number>(onlyX).fill(1), ...Array<number>(onlyY).fill(0), ...Array<number>(both).fill(1)],
    [...Array<number>(onlyX).fill(0), ...Array<number>(onlyY).fill(1), ...Array<number>(both).fill(1)],
  ];
}

describe('mcnemarExact', () => {
  it('is the two-sided exact binomial test on the discordant pairs (hand-computed values)', () => {
    // n = 18, k = 3: (1 + 18 + 153 + 816) / 2^18, doubled.
    expect(mcnemarExact(...pairs(3, 15, 40)).pValue).toBeCloseTo((2 * 988) / 262144, 14);
    // n = 10, k = 1: 2 · 11 / 1024.
    expect(mcnemarExact(...pairs(9, 1)).pValue).toBeCloseTo(22 / 1024, 14);
    const r = mcnemarExact(...pairs(9, 1, 5));
    expect(r).toMatchObject({ onlyX: 9, onlyY: 1, statistic: 1 });
  });

  it('caps p at 1 and gives 1 with no discordant pair', () => {
    expect(mcnemarExact(...pairs(5, 5)).pValue).toBe(1);
    expect(mcnemarExact([1, 0, 1], [1, 0, 1]).pValue).toBe(1);
  });

  it('stays exact for hundreds of pairs (n = 100)', () => {
    // scipy.stats.binom.cdf(30, 100, 0.5) * 2 = 7.85013964277...e-05
    expect(mcnemarExact(...pairs(70, 30, 200)).pValue).toBeCloseTo(7.85013964559367e-5, 15);
    expect(binomialHalfCdf(50, 100)).toBeCloseTo(0.5397946186935895, 13);
  });

  it('refuses unequal lengths and values other than 0 and 1', () => {
    expect(() => mcnemarExact([1, 0], [1])).toThrow(/pairs need equal lengths/);
    expect(() => mcnemarExact([1, 0.5], [1, 0])).toThrow(/pair 1 is \(0.5, 0\)/);
  });
});
