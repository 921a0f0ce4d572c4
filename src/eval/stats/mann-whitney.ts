import { assertFinite, assertMinLength } from './descriptive.js';
import { normalSf } from './normal.js';

/** What {@link mannWhitneyU} returns. */
export interface MannWhitneyResult {
  /** U of the first sample: the number of pairs (xᵢ, yⱼ) with xᵢ > yⱼ, ties counting ½ (scipy's `statistic`). */
  u1: number;
  /** U of the second sample, nₓnᵧ − U₁. */
  u2: number;
  /** The normal deviate of max(U₁, U₂) with tie and continuity corrections (≤ 0 only when U₁ = U₂). */
  z: number;
  /** Two-sided p-value, min(1, 2 · P(Z ≥ z)); 1 when every value is tied. */
  pValue: number;
  /**
   * The common-language effect size U₁ / (nₓnᵧ) = P(X > Y) + ½ P(X = Y): 0.5 means no tendency,
   * 1 means every x beats every y.
   */
  probabilityOfSuperiority: number;
}

/**
 * The Mann–Whitney U test (Mann & Whitney 1947; Wilcoxon rank-sum), two-sided, **normal approximation
 * with tie correction and continuity correction**:
 *
 *   U₁ = R₁ − nₓ(nₓ+1)/2 (R₁ = sum of mid-ranks of x in the pooled sample),
 *   σ² = nₓnᵧ/12 · ((n + 1) − Σ(tₖ³ − tₖ) / (n(n − 1)))   (tₖ = size of the k-th tie group, n = nₓ + nᵧ),
 *   z  = (max(U₁, U₂) − nₓnᵧ/2 − ½) / σ,   p = min(1, 2 · (1 − Φ(z))).
 *
 * This is exactly `scipy.stats.mannwhitneyu(x, y, alternative='two-sided', method='asymptotic',
 * use_continuity=True)`. No exact small-sample distribution is used, so for very small samples
 * (nₓ, nᵧ < ~8) the p-value is an approximation.
 *
 * @throws RangeError when a sample is empty or holds a non-finite value.
 */
export function mannWhitneyU(x: readonly number[], y: readonly number[]): MannWhitneyResult {
  assertMinLength(x, 1, 'x', 'mannWhitneyU');
  assertMinLength(y, 1, 'y', 'mannWhitneyU');
  assertFinite(x, 'x');
  assertFinite(y, 'y');
  const nx = x.length;
  const ny = y.length;
  const n = nx + ny;
  const pooled = [...x.map((v) => ({ v, fromX: true })), ...y.map((v) => ({ v, fromX: false }))].sort((a, b) => a.v - b.v);
  let rankSumX = 0;
  let tieTerm = 0;
  for (let i = 0; i < n; ) {
    let j = i;
    while (j + 1 < n && (pooled[j + 1] as { v: number }).v === (pooled[i] as { v: number }).v) j++;
    const midRank = (i + j + 2) / 2; // ranks are 1-based: positions i..j hold ranks i+1..j+1
    const t = j - i + 1;
    tieTerm += t * t * t - t;
    for (let k = i; k <= j; k++) if ((pooled[k] as { fromX: boolean }).fromX) rankSumX += midRank;
    i = j + 1;
  }
  const u1 = rankSumX - (nx * (nx + 1)) / 2;
  const u2 = nx * ny - u1;
  const mu = (nx * ny) / 2;
  const sigma = Math.sqrt(((nx * ny) / 12) * (n + 1 - tieTerm / (n * (n - 1))));
  const numerator = Math.max(u1, u2) - mu - 0.5;
  // σ = 0 only when every value is tied (then U₁ = U₂ = μ): no evidence of a difference at all.
  const z = sigma === 0 || !Number.isFinite(sigma) ? -Infinity : numerator / sigma;
  const pValue = Math.min(1, 2 * normalSf(z));
  return { u1, u2, z, pValue, probabilityOfSuperiority: u1 / (nx * ny) };
}
