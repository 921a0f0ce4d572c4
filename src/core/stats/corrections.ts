/**
 * Multiple-comparison corrections of p-values (family-wise error rate). Both take the raw p-values of
 * one family of tests and return adjusted p-values in the same order; reject hypothesis i at level α
 * when `adjusted[i] < α`. `NaN` entries (tests that could not be computed) stay `NaN` and are left out
 * of the family size m.
 */

function check(pValues: readonly number[], name: string): void {
  pValues.forEach((p, i) => {
    if (!Number.isNaN(p) && !(p >= 0 && p <= 1)) throw new RangeError(`${name}: pValues[${i}] must be in [0, 1] or NaN, got ${p}`);
  });
}

/**
 * Bonferroni: p̃ᵢ = min(1, m·pᵢ). Controls the family-wise error rate under any dependence; the most
 * conservative choice.
 */
export function bonferroni(pValues: readonly number[]): number[] {
  check(pValues, 'bonferroni');
  const m = pValues.filter((p) => !Number.isNaN(p)).length;
  return pValues.map((p) => (Number.isNaN(p) ? p : Math.min(1, m * p)));
}

/**
 * Holm's step-down procedure (Holm 1979): sort the m p-values ascending, p₍₁₎ ≤ … ≤ p₍ₘ₎, and set
 * p̃₍ᵢ₎ = min(1, max_{j ≤ i} (m − j + 1) · p₍ⱼ₎). Controls the family-wise error rate under any
 * dependence like Bonferroni, and is uniformly more powerful. Same as statsmodels
 * `multipletests(p, method='holm')[1]`.
 */
export function holm(pValues: readonly number[]): number[] {
  check(pValues, 'holm');
  const order = pValues
    .map((p, i) => ({ p, i }))
    .filter((e) => !Number.isNaN(e.p))
    .sort((a, b) => a.p - b.p || a.i - b.i);
  const m = order.length;
  const out = pValues.map(() => Number.NaN);
  let running = 0;
  order.forEach((e, j) => {
    running = Math.max(running, Math.min(1, (m - j) * e.p));
    out[e.i] = running;
  });
  return out;
}
