import { regularizedIncompleteBeta } from './beta.js';
import { normalCdf, normalQuantile, normalSf } from './normal.js';

/**
 * Student's t distribution with ν > 0 degrees of freedom (ν need not be an integer: Welch's test
 * produces fractional ν). Tail probabilities come from the regularized incomplete beta function
 * (Abramowitz & Stegun 26.7.1; *Numerical Recipes* 3rd ed. §6.14):
 *
 *   P(|T| > t) = I_{ν/(ν+t²)}(ν/2, ½),
 *
 * passing 1 − x = t²/(ν + t²) explicitly so that neither tiny nor near-one p-values lose precision to
 * cancellation. ν = Infinity gives the standard normal.
 */

function checkDf(df: number, name: string): void {
  if (!(df > 0)) throw new RangeError(`${name}: degrees of freedom must be > 0, got ${df}`);
}

/**
 * Two-sided tail probability P(|T| ≥ |t|), the p-value of a two-sided t-test.
 *
 * @throws RangeError when df ≤ 0 or t is NaN.
 */
export function studentTTwoSided(t: number, df: number): number {
  checkDf(df, 'studentTTwoSided');
  if (Number.isNaN(t)) throw new RangeError('studentTTwoSided: t is NaN');
  const a = Math.abs(t);
  if (a === Infinity) return 0;
  if (df === Infinity) return 2 * normalSf(a);
  const t2 = a * a;
  return regularizedIncompleteBeta(df / (df + t2), df / 2, 0.5, t2 / (df + t2));
}

/** Survival function P(T > t). */
export function studentTSf(t: number, df: number): number {
  checkDf(df, 'studentTSf');
  if (Number.isNaN(t)) throw new RangeError('studentTSf: t is NaN');
  if (df === Infinity) return normalSf(t);
  const half = 0.5 * studentTTwoSided(t, df);
  return t >= 0 ? half : 1 - half;
}

/** Cumulative distribution function P(T ≤ t). */
export function studentTCdf(t: number, df: number): number {
  checkDf(df, 'studentTCdf');
  if (Number.isNaN(t)) throw new RangeError('studentTCdf: t is NaN');
  if (df === Infinity) return normalCdf(t);
  const half = 0.5 * studentTTwoSided(t, df);
  return t <= 0 ? half : 1 - half;
}

/**
 * The quantile function: the t with P(T ≤ t) = p. Found by bracketing and bisection on the survival
 * function down to adjacent doubles (robust for any ν; the CDF is monotone).
 *
 * @throws RangeError when p is outside [0, 1] or df ≤ 0.
 */
export function studentTQuantile(p: number, df: number): number {
  checkDf(df, 'studentTQuantile');
  if (!(p >= 0 && p <= 1)) throw new RangeError(`studentTQuantile: p must be in [0, 1], got ${p}`);
  if (df === Infinity) return normalQuantile(p);
  if (p === 0) return -Infinity;
  if (p === 1) return Infinity;
  if (p === 0.5) return 0;
  // Solve on the upper half: P(T > t) = q with t > 0.
  const q = p > 0.5 ? 1 - p : p;
  let lo = 0;
  let hi = 1;
  while (studentTSf(hi, df) > q) {
    lo = hi;
    hi *= 2;
    if (hi > 1e300) break;
  }
  for (let i = 0; i < 2000; i++) {
    const mid = lo + (hi - lo) / 2;
    if (mid <= lo || mid >= hi) break;
    if (studentTSf(mid, df) > q) lo = mid;
    else hi = mid;
  }
  const t = lo + (hi - lo) / 2;
  return p > 0.5 ? t : -t;
}
