import { describe, expect, it } from 'vitest';
import { TIED_AUTO, TIED_HUMAN, X, Y } from './__fixtures__/paired-samples.js';
import { spearman } from './spearman.js';

// Reference values: scipy.stats.spearmanr(x, y).statistic (see the fixture).
describe('spearman', () => {
  it('matches scipy.stats.spearmanr with and without ties', () => {
    expect(spearman(TIED_AUTO, TIED_HUMAN)).toBeCloseTo(0.9346928345920194, 12);
    expect(spearman(X, Y)).toBeCloseTo(0.9020979020979022, 12);
  });

  it('is NaN on a NaN input', () => {
    expect(spearman([1, Number.NaN, 3], [1, 2, 3])).toBeNaN();
  });
});
