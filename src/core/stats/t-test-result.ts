/** What the t-tests of this folder return. */
export interface TTestResult {
  /** The t statistic; ±Infinity when the standard error is 0 but the means differ, NaN when both are 0. */
  statistic: number;
  /** Degrees of freedom; NaN when undefined (Welch with both variances 0). */
  df: number;
  /** Two-sided p-value from Student's t with `df` degrees of freedom (0 for an infinite t, NaN when t is NaN). */
  pValue: number;
  /** The estimated difference: mean(x) − mean(y), or the mean of the paired differences. */
  estimate: number;
  /** Standard error of `estimate`. */
  standardError: number;
  /** t-based confidence interval of `estimate` (NaN bounds when df is undefined). */
  ci: { low: number; high: number; confidence: number };
}
