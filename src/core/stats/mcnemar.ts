import { logGamma } from './gamma.js';

/** What {@link mcnemarExact} returns. */
export interface McNemarResult {
  /** Pairs in which only the first measurement succeeded. */
  onlyX: number;
  /** Pairs in which only the second measurement succeeded. */
  onlyY: number;
  /** min(onlyX, onlyY): the binomial test's statistic. */
  statistic: number;
  /** Two-sided exact p-value, min(1, 2·P(B ≤ statistic)) for B ~ Binomial(onlyX + onlyY, ½); 1 with no discordant pair. */
  pValue: number;
}

/**
 * McNemar's test, exact form (McNemar 1947; the exact binomial version of Mosteller 1952): for paired binary
 * outcomes, whether the two measurements succeed equally often. Only the discordant pairs count: under the null
 * each is equally likely to favour either side, so the smaller count is Binomial(n, ½) with n the discordant
 * pairs. Matches `statsmodels.stats.contingency_tables.mcnemar(table, exact=True)`.
 *
 * Use it for success before and after training on the same episodes (same tasks, same seeds, deterministic
 * decoding): each episode is its own pair, so no between-task variance enters the test.
 *
 * @example
 * ```ts
 * mcnemarExact([1, 0, 1, 1], [1, 1, 1, 0]).pValue; // 1 (one discordant pair each way)
 * ```
 * @throws RangeError when the samples differ in length or hold a value other than 0 or 1.
 */
export function mcnemarExact(x: readonly number[], y: readonly number[]): McNemarResult {
  if (x.length !== y.length) throw new RangeError(`mcnemarExact: x has ${x.length} values but y has ${y.length}; pairs need equal lengths`);
  let onlyX = 0;
  let onlyY = 0;
  for (let i = 0; i < x.length; i++) {
    const a = x[i] as number;
    const b = y[i] as number;
    if ((a !== 0 && a !== 1) || (b !== 0 && b !== 1)) {
      throw new RangeError(`mcnemarExact: pair ${i} is (${a}, ${b}); McNemar's test needs binary outcomes (0 or 1)`);
    }
    if (a === 1 && b === 0) onlyX++;
    else if (a === 0 && b === 1) onlyY++;
  }
  const statistic = Math.min(onlyX, onlyY);
  return { onlyX, onlyY, statistic, pValue: Math.min(1, 2 * binomialHalfCdf(statistic, onlyX + onlyY)) };
}

/** P(B ≤ k) for B ~ Binomial(n, ½), summed in log space (exact to rounding for any n). */
export function binomialHalfCdf(k: number, n: number): number {
  if (n === 0) return 1;
  const logTerms: number[] = [];
  const logN1 = logGamma(n + 1);
  for (let i = 0; i <= k; i++) logTerms.push(logN1 - logGamma(i + 1) - logGamma(n - i + 1) - n * Math.LN2);
  const top = Math.max(...logTerms);
  return Math.min(1, Math.exp(top) * logTerms.reduce((s, t) => s + Math.exp(t - top), 0));
}
