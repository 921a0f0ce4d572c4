import { normalQuantile } from './normal.js';

/** A confidence interval of a proportion. */
export interface ProportionInterval {
  /** The observed proportion k / n. */
  estimate: number;
  low: number;
  high: number;
  confidence: number;
}

/**
 * The Wilson score interval of a binomial proportion (Wilson 1927): with p̂ = k/n and z = Φ⁻¹(1 − α/2),
 *
 *   (p̂ + z²/2n ± z √(p̂(1 − p̂)/n + z²/4n²)) / (1 + z²/n).
 *
 * Unlike the Wald interval it stays inside [0, 1] and keeps near-nominal coverage at 0/n and n/n, which
 * is where agent success rates often sit (Brown, Cai & DasGupta 2001). Same as statsmodels
 * `proportion_confint(k, n, alpha, method='wilson')`.
 *
 * @throws RangeError when n is not a positive integer, k not an integer in [0, n], or confidence not in (0, 1).
 */
export function wilsonInterval(successes: number, n: number, confidence = 0.95): ProportionInterval {
  if (!Number.isInteger(n) || n <= 0) throw new RangeError(`wilsonInterval: n must be a positive integer, got ${n}`);
  if (!Number.isInteger(successes) || successes < 0 || successes > n) {
    throw new RangeError(`wilsonInterval: successes must be an integer in [0, ${n}], got ${successes}`);
  }
  if (!(confidence > 0 && confidence < 1)) throw new RangeError(`wilsonInterval: confidence must be in (0, 1), got ${confidence}`);
  const z = normalQuantile(1 - (1 - confidence) / 2);
  const p = successes / n;
  const z2n = (z * z) / n;
  const center = (p + z2n / 2) / (1 + z2n);
  const half = (z / (1 + z2n)) * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n));
  // At 0/n and n/n the bound is exactly 0 (or 1); the two terms cancel only up to rounding.
  const low = successes === 0 ? 0 : Math.max(0, center - half);
  const high = successes === n ? 1 : Math.min(1, center + half);
  return { estimate: p, low, high, confidence };
}
