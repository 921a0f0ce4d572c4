/**
 * Descriptive statistics shared by the tests and intervals of `src/core/stats`. Every function takes a
 * plain array of finite numbers and throws a `RangeError` naming the argument when it cannot answer
 * (too few values), so a caller never averages nothing by accident.
 */

/** Throws unless every value is a finite number; `name` appears in the message. */
export function assertFinite(xs: readonly number[], name: string): void {
  for (let i = 0; i < xs.length; i++) {
    const v = xs[i] as number;
    if (typeof v !== 'number' || !Number.isFinite(v)) throw new RangeError(`${name}[${i}]: expected a finite number, got ${String(v)}`);
  }
}

/** Throws unless `xs` has at least `min` values. */
export function assertMinLength(xs: readonly number[], min: number, name: string, what: string): void {
  if (xs.length < min) throw new RangeError(`${what}: ${name} has ${xs.length} value(s); at least ${min} needed`);
}

/** Throws unless the paired samples `x` and `y` have equal lengths; `what` names the statistic. */
export function assertSameLength(x: readonly number[], y: readonly number[], what: string): void {
  if (x.length !== y.length) throw new RangeError(`${what}: x has ${x.length} values, y has ${y.length}`);
}

/** Sum with Neumaier's compensation, so long lists of small rewards do not drift. */
export function sum(xs: readonly number[]): number {
  let s = 0;
  let c = 0;
  for (const x of xs) {
    const t = s + x;
    c += Math.abs(s) >= Math.abs(x) ? s - t + x : x - t + s;
    s = t;
  }
  return s + c;
}

/**
 * Arithmetic mean.
 *
 * @throws RangeError when `xs` is empty.
 */
export function mean(xs: readonly number[], name = 'xs'): number {
  assertMinLength(xs, 1, name, 'mean');
  return sum(xs) / xs.length;
}

/**
 * Unbiased sample variance (denominator n − 1), computed in two passes with the correction term of
 * Chan, Golub & LeVeque (1983) so that a constant sample gives exactly 0.
 *
 * @throws RangeError when `xs` has fewer than 2 values.
 */
export function variance(xs: readonly number[], name = 'xs'): number {
  assertMinLength(xs, 2, name, 'variance');
  const m = mean(xs, name);
  let ss = 0;
  let comp = 0;
  for (const x of xs) {
    const d = x - m;
    ss += d * d;
    comp += d;
  }
  return Math.max(0, (ss - (comp * comp) / xs.length) / (xs.length - 1));
}

/** Sample standard deviation, `sqrt(variance(xs))`. */
export function standardDeviation(xs: readonly number[], name = 'xs'): number {
  return Math.sqrt(variance(xs, name));
}

/** Standard error of the mean, `sd / sqrt(n)`. */
export function standardError(xs: readonly number[], name = 'xs'): number {
  return standardDeviation(xs, name) / Math.sqrt(xs.length);
}

/**
 * The q-quantile of **sorted** values with linear interpolation between order statistics
 * (Hyndman & Fan 1996, definition 7 — the default of numpy and R).
 *
 * @throws RangeError when `sorted` is empty or `q` is outside [0, 1].
 */
export function quantileSorted(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) throw new RangeError('quantileSorted: sorted is empty');
  if (!(q >= 0 && q <= 1)) throw new RangeError(`quantileSorted: q must be in [0, 1], got ${q}`);
  const h = (sorted.length - 1) * q;
  const lo = Math.floor(h);
  const hi = Math.ceil(h);
  const a = sorted[lo] as number;
  const b = sorted[hi] as number;
  return a + (h - lo) * (b - a);
}
