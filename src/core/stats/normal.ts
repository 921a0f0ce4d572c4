import { regularizedGammaP, regularizedGammaQ } from './gamma.js';

/**
 * The standard normal distribution. `erfc` is computed through the incomplete gamma function,
 * erfc(x) = Q(½, x²) for x ≥ 0 (Abramowitz & Stegun 7.1.2 with 6.5.17; *Numerical Recipes* 3rd ed. §6.2),
 * which keeps full relative precision deep into the tail (Φ(−37) ≈ 5.7e−300 is still right), unlike the
 * short rational approximations that stop at ~1e−7.
 */

/** The complementary error function erfc(x) = 1 − erf(x). */
export function erfc(x: number): number {
  if (Number.isNaN(x)) throw new RangeError('erfc: x is NaN');
  return x >= 0 ? regularizedGammaQ(0.5, x * x) : 1 + regularizedGammaP(0.5, x * x);
}

/** The error function erf(x). */
export function erf(x: number): number {
  if (Number.isNaN(x)) throw new RangeError('erf: x is NaN');
  const p = regularizedGammaP(0.5, x * x);
  return x >= 0 ? p : -p;
}

/** Φ(z) = P(Z ≤ z) for a standard normal Z. */
export function normalCdf(z: number): number {
  return 0.5 * erfc(-z / Math.SQRT2);
}

/** The survival function 1 − Φ(z) = P(Z > z), computed without cancellation for large z. */
export function normalSf(z: number): number {
  return 0.5 * erfc(z / Math.SQRT2);
}

/** The density φ(z). */
export function normalPdf(z: number): number {
  return Math.exp(-0.5 * z * z) / Math.sqrt(2 * Math.PI);
}

/**
 * The quantile function Φ⁻¹(p) for 0 < p < 1 (±Infinity at 0 and 1). Starts from Abramowitz & Stegun
 * 26.2.23 (|error| < 4.5e−4) and polishes with Halley steps on the lower tail until the step is below
 * machine precision.
 *
 * @throws RangeError when p is outside [0, 1].
 */
export function normalQuantile(p: number): number {
  if (!(p >= 0 && p <= 1)) throw new RangeError(`normalQuantile: p must be in [0, 1], got ${p}`);
  if (p === 0) return -Infinity;
  if (p === 1) return Infinity;
  if (p === 0.5) return 0;
  // 1 − p is exact for p ≥ 0.5 (Sterbenz), so the upper half reflects onto the lower tail losslessly.
  if (p > 0.5) return -normalQuantile(1 - p);
  const t = Math.sqrt(-2 * Math.log(p));
  let z = -(t - (2.515517 + 0.802853 * t + 0.010328 * t * t) / (1 + 1.432788 * t + 0.189269 * t * t + 0.001308 * t * t * t));
  for (let i = 0; i < 50; i++) {
    const e = normalCdf(z) - p;
    const u = e / normalPdf(z);
    const step = u / (1 + (z * u) / 2);
    z -= step;
    if (Math.abs(step) <= 4 * Number.EPSILON * Math.max(1, Math.abs(z))) break;
  }
  return z;
}
