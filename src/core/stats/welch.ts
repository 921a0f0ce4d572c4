import { assertFinite, assertMinLength, mean, variance } from './descriptive.js';
import { studentTQuantile, studentTTwoSided } from './student-t.js';
import type { TTestResult } from './t-test-result.js';

/**
 * Welch's unequal-variances t-test (Welch 1947), two-sided:
 *
 *   t = (x̄ − ȳ) / √(s²ₓ/nₓ + s²ᵧ/nᵧ),
 *   ν = (s²ₓ/nₓ + s²ᵧ/nᵧ)² / ((s²ₓ/nₓ)²/(nₓ−1) + (s²ᵧ/nᵧ)²/(nᵧ−1))   (Welch–Satterthwaite),
 *
 * p = P(|T_ν| ≥ |t|). Matches `scipy.stats.ttest_ind(x, y, equal_var=False)`, including its degenerate
 * cases: both samples constant and equal → t = NaN, p = NaN; both constant but different → t = ±∞, p = 0
 * (here ν is reported as NaN rather than scipy's placeholder).
 *
 * @example
 * ```ts
 * welchTTest([1, 2, 3, 4], [3, 4, 5, 6, 7]).pValue; // 0.0349…
 * ```
 * @throws RangeError when a sample has fewer than 2 values or a non-finite value.
 */
export function welchTTest(x: readonly number[], y: readonly number[], options: { confidence?: number } = {}): TTestResult {
  const confidence = options.confidence ?? 0.95;
  assertMinLength(x, 2, 'x', 'welchTTest');
  assertMinLength(y, 2, 'y', 'welchTTest');
  assertFinite(x, 'x');
  assertFinite(y, 'y');
  const vx = variance(x, 'x') / x.length;
  const vy = variance(y, 'y') / y.length;
  const estimate = mean(x, 'x') - mean(y, 'y');
  const se = Math.sqrt(vx + vy);
  const df = se === 0 ? Number.NaN : (vx + vy) ** 2 / (vx ** 2 / (x.length - 1) + vy ** 2 / (y.length - 1));
  return tResult(estimate, se, df, confidence);
}

/**
 * Builds a {@link TTestResult} from an estimate, its standard error and degrees of freedom (shared by
 * the Welch and paired tests).
 */
export function tResult(estimate: number, se: number, df: number, confidence: number): TTestResult {
  if (!(confidence > 0 && confidence < 1)) throw new RangeError(`confidence must be in (0, 1), got ${confidence}`);
  if (se === 0) {
    const statistic = estimate === 0 ? Number.NaN : estimate > 0 ? Infinity : -Infinity;
    return {
      statistic,
      df,
      pValue: estimate === 0 ? Number.NaN : 0,
      estimate,
      standardError: 0,
      ci: { low: estimate, high: estimate, confidence },
    };
  }
  const statistic = estimate / se;
  const crit = studentTQuantile(1 - (1 - confidence) / 2, df);
  return {
    statistic,
    df,
    pValue: studentTTwoSided(statistic, df),
    estimate,
    standardError: se,
    ci: { low: estimate - crit * se, high: estimate + crit * se, confidence },
  };
}
