import { assertSameLength } from './descriptive.js';
import { pearson } from './pearson.js';
import { averageRanks } from './ranks.js';

/** Spearman's rho: Pearson's correlation of the average ranks (tie-aware, as scipy's `spearmanr`). */
export function spearman(x: readonly number[], y: readonly number[]): number {
  assertSameLength(x, y, 'spearman');
  if (x.some(Number.isNaN) || y.some(Number.isNaN)) return Number.NaN; // infinities rank like other values
  return pearson(averageRanks(x), averageRanks(y));
}
