import { assertFinite, assertMinLength, mean, standardError } from './descriptive.js';
import type { TTestResult } from './t-test-result.js';
import { tResult } from './welch.js';

/**
 * The paired t-test (Student 1908), two-sided: with dᵢ = xᵢ − yᵢ, t = d̄ / (s_d / √n), ν = n − 1.
 * Matches `scipy.stats.ttest_rel(x, y)`, including its degenerate cases (all differences equal and
 * non-zero → t = ±∞, p = 0; all zero → NaN).
 *
 * Use it when `x[i]` and `y[i]` measure the same unit (the same task) under two agents: it removes the
 * between-task variance that Welch's test has to carry.
 *
 * @throws RangeError when the samples differ in length, have fewer than 2 pairs, or a non-finite value.
 */
export function pairedTTest(x: readonly number[], y: readonly number[], options: { confidence?: number } = {}): TTestResult {
  if (x.length !== y.length) throw new RangeError(`pairedTTest: x has ${x.length} values but y has ${y.length}; pairs need equal lengths`);
  assertMinLength(x, 2, 'x', 'pairedTTest');
  assertFinite(x, 'x');
  assertFinite(y, 'y');
  const d = x.map((v, i) => v - (y[i] as number));
  return tResult(mean(d, 'x − y'), standardError(d, 'x − y'), d.length - 1, options.confidence ?? 0.95);
}
