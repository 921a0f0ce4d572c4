import { assertFinite, assertMinLength } from './descriptive.js';
import { mannWhitneyExactSf, mannWhitneyExactSupported } from './mann-whitney-exact.js';
import { normalSf } from './normal.js';

/**
 * The alternative hypothesis, as scipy names it: `greater` = x tends to be larger than y (large U₁),
 * `less` = x tends to be smaller, `two-sided` = either.
 */
export type MannWhitneyAlternative = 'two-sided' | 'greater' | 'less';

/**
 * How the p-value is computed. `auto` (default) = `exact` when there are no ties and the exact
 * distribution is available ({@link mannWhitneyExactSupported}: the smaller group has ≤ 8 values and
 * C(m+n, m) ≤ 2⁵³ − 1), `asymptotic` otherwise.
 */
export type MannWhitneyMethod = 'auto' | 'exact' | 'asymptotic';

/** Options of {@link mannWhitneyU}. */
export interface MannWhitneyOptions {
  /** Default `two-sided`. */
  alternative?: MannWhitneyAlternative;
  /** Default `auto`. */
  method?: MannWhitneyMethod;
}

/** What {@link mannWhitneyU} returns. */
export interface MannWhitneyResult {
  /** U of the first sample: the number of pairs (xᵢ, yⱼ) with xᵢ > yⱼ, ties counting ½ (scipy's `statistic`). */
  u1: number;
  /** U of the second sample, nₓnᵧ − U₁. */
  u2: number;
  /**
   * The normal deviate, with tie and continuity corrections, of the U the alternative looks at: max(U₁, U₂)
   * for `two-sided` (then ≤ 0 only when U₁ = U₂), U₁ for `greater`, U₂ for `less`. Reported whichever
   * method computed the p-value.
   */
  z: number;
  /** The p-value of the alternative (two-sided: min(1, 2 · P(U ≥ max(U₁, U₂)))); 1 when every value is tied. */
  pValue: number;
  /** Which null distribution gave `pValue`: the exact one of U (no ties) or the normal approximation. */
  method: 'exact' | 'asymptotic';
  /** The alternative `pValue` is for. */
  alternative: MannWhitneyAlternative;
  /**
   * The common-language effect size U₁ / (nₓnᵧ) = P(X > Y) + ½ P(X = Y): 0.5 means no tendency,
   * 1 means every x beats every y.
   */
  probabilityOfSuperiority: number;
}

/**
 * The Mann–Whitney U test (Mann & Whitney 1947; Wilcoxon rank-sum), as
 * `scipy.stats.mannwhitneyu(x, y, alternative, method='auto', use_continuity=True)`:
 *
 *   U₁ = R₁ − nₓ(nₓ+1)/2 (R₁ = sum of mid-ranks of x in the pooled sample), U₂ = nₓnᵧ − U₁;
 *   the statistic is U = max(U₁, U₂) (two-sided, p doubled and capped at 1), U₁ (`greater`) or U₂ (`less`).
 *
 * - **Exact** (no ties, smaller group ≤ 8, C(nₓ+nᵧ, nₓ) ≤ 2⁵³ − 1): p = P(U′ ≥ U) under the exact null
 *   distribution of U′ ({@link mannWhitneyExactSf}). This is scipy's `method='auto'` rule, except that
 *   scipy also goes exact beyond 2⁵³ arrangements (a smaller group of 8 against more than 367), where
 *   this function uses the normal approximation instead.
 * - **Asymptotic** otherwise, normal approximation with tie correction and continuity correction:
 *   σ² = nₓnᵧ/12 · ((n + 1) − Σ(tₖ³ − tₖ) / (n(n − 1)))   (tₖ = size of the k-th tie group, n = nₓ + nᵧ),
 *   z = (U − nₓnᵧ/2 − ½) / σ, p = P(Z ≥ z) (two-sided: min(1, 2 · P(Z ≥ z))).
 *
 * `method: 'exact'` or `'asymptotic'` forces one (scipy's `method=` argument); `exact` with ties is refused
 * rather than ignoring them as scipy does.
 *
 * @example
 * ```ts
 * mannWhitneyU([1, 1.1, 1.2], [0, 0.1, 0.2]); // { u1: 9, pValue: 0.1, method: 'exact', … } (2 of 20 orders are as extreme)
 * mannWhitneyU([1, 1.1, 1.2], [0, 0.1, 0.2], { method: 'asymptotic' }).pValue; // 0.0809
 * ```
 * @throws RangeError when a sample is empty or holds a non-finite value, or `method: 'exact'` is asked for
 * samples with ties or sizes outside {@link mannWhitneyExactSupported}.
 */
export function mannWhitneyU(x: readonly number[], y: readonly number[], options: MannWhitneyOptions = {}): MannWhitneyResult {
  const alternative = options.alternative ?? 'two-sided';
  const requested = options.method ?? 'auto';
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
  const u = alternative === 'greater' ? u1 : alternative === 'less' ? u2 : Math.max(u1, u2);
  const factor = alternative === 'two-sided' ? 2 : 1;

  const ties = tieTerm > 0;
  const exactAvailable = !ties && mannWhitneyExactSupported(nx, ny);
  if (requested === 'exact' && !exactAvailable) {
    throw new RangeError(
      ties
        ? 'mannWhitneyU: method exact needs samples without ties (the exact distribution has no tie correction); use auto or asymptotic'
        : `mannWhitneyU: method exact is not available for groups of ${nx} and ${ny} (see mannWhitneyExactSupported); use auto or asymptotic`,
    );
  }
  const method = requested === 'asymptotic' || !exactAvailable ? 'asymptotic' : 'exact';

  const mu = (nx * ny) / 2;
  const sigma = Math.sqrt(((nx * ny) / 12) * (n + 1 - tieTerm / (n * (n - 1))));
  // σ = 0 only when every value is tied (then U₁ = U₂ = μ): no evidence of a difference at all.
  const z = sigma === 0 || !Number.isFinite(sigma) ? -Infinity : (u - mu - 0.5) / sigma;
  const tail = method === 'exact' ? mannWhitneyExactSf(u, nx, ny) : normalSf(z);
  const pValue = Math.min(1, factor * tail);
  return { u1, u2, z, pValue, method, alternative, probabilityOfSuperiority: u1 / (nx * ny) };
}
