/**
 * The exact null distribution of the Mann–Whitney U statistic for two samples without ties.
 *
 * Under H₀ every one of the C(m+n, m) arrangements of m x's and n y's in the pooled order is equally
 * likely. N(u; m, n), the number of arrangements with U = u, satisfies Mann & Whitney's (1947) recursion
 * (is the largest value an x, which beats all n y's, or a y?)
 *
 *   N(u; m, n) = N(u − n; m − 1, n) + N(u; m, n − 1),   N(0; 0, n) = N(0; m, 0) = 1,
 *
 * whose generating function Σᵤ N(u; m, n) qᵘ is the Gaussian binomial coefficient
 * [m+n choose m]_q = ∏_{i=1..m} (1 − q^{n+i}) / (1 − q^i). {@link mannWhitneyExactCounts} builds that
 * product one factor at a time in one array (O(m · mn) additions, O(mn) memory) instead of the
 * O(m²n²) table of the recursion; the tests check both give the same counts.
 */

/** The exact method is used only when the smaller group has at most this many values (scipy's 'auto' rule). */
export const MANN_WHITNEY_EXACT_MAX_SMALLER_GROUP = 8;

/**
 * The exact method is used only when m·n (the largest U) is at most this: it bounds the array (m·n + 1
 * doubles, 8 MB) and the work (≤ 8 · 10⁶ additions). It binds only for a smaller group of 1 to 3.
 */
export const MANN_WHITNEY_EXACT_MAX_CELLS = 1_000_000;

/**
 * Whether the exact distribution of U for groups of m and n is computed here: the smaller group has at most
 * {@link MANN_WHITNEY_EXACT_MAX_SMALLER_GROUP} values, m·n ≤ {@link MANN_WHITNEY_EXACT_MAX_CELLS}, and
 * C(m+n, m) ≤ 2⁵³ − 1, so every count is an integer a double holds exactly (for a smaller group of 8 that is
 * a larger group of at most 367; of 5, 4040).
 */
export function mannWhitneyExactSupported(m: number, n: number): boolean {
  const small = Math.min(m, n);
  const large = Math.max(m, n);
  if (!Number.isSafeInteger(small) || !Number.isSafeInteger(large) || small < 1) return false;
  if (small > MANN_WHITNEY_EXACT_MAX_SMALLER_GROUP || small * large > MANN_WHITNEY_EXACT_MAX_CELLS) return false;
  // C(large + small, small) with BigInt: a double product could round on the way past 2⁵³.
  let c = 1n;
  for (let i = 1n; i <= BigInt(small); i++) c = (c * (BigInt(large) + i)) / i;
  return c <= BigInt(Number.MAX_SAFE_INTEGER);
}

/**
 * N(u; m, n) for u = 0 … m·n: how many of the C(m+n, m) arrangements of m x's and n y's give U = u
 * (U = the number of pairs with the x above the y). The array is symmetric (N(u) = N(mn − u)) and sums to
 * C(m+n, m).
 *
 * @example
 * ```ts
 * mannWhitneyExactCounts(2, 2); // [1, 1, 2, 1, 1]: of the 6 orders of xxyy, two give U = 2
 * ```
 * @throws RangeError when the sizes are outside {@link mannWhitneyExactSupported}.
 */
export function mannWhitneyExactCounts(m: number, n: number): number[] {
  if (!mannWhitneyExactSupported(m, n)) {
    throw new RangeError(`mannWhitneyExactCounts: sizes ${m} and ${n} are outside the exact method's range (see mannWhitneyExactSupported)`);
  }
  // The distribution is symmetric in the two sizes; the product has fewer factors over the smaller one.
  const small = Math.min(m, n);
  const large = Math.max(m, n);
  const top = small * large;
  const a = new Array<number>(top + 1).fill(0);
  a[0] = 1;
  for (let i = 1; i <= small; i++) {
    // × (1 − q^{large+i}), truncated at degree `top` (the final polynomial's degree; truncation is exact for
    // power series, and both steps only read lower degrees).
    const d = large + i;
    for (let u = top; u >= d; u--) a[u] = (a[u] as number) - (a[u - d] as number);
    // ÷ (1 − q^i): a running sum. Every value written is a coefficient of [large+i choose i]_q, an integer
    // ≤ C(large+i, i) ≤ C(m+n, m) ≤ 2⁵³ − 1, so this integer arithmetic in doubles is exact.
    for (let u = i; u <= top; u++) a[u] = (a[u] as number) + (a[u - i] as number);
  }
  return a;
}

/**
 * P(U ≥ u) under H₀ (no ties) for groups of m and n: the exact survival function, inclusive of u, as a ratio
 * of exact integer counts (one rounding). The tail is summed on whichever side of m·n/2 is shorter.
 *
 * @throws RangeError when u is not an integer or the sizes are outside {@link mannWhitneyExactSupported}.
 */
export function mannWhitneyExactSf(u: number, m: number, n: number): number {
  if (!Number.isInteger(u)) throw new RangeError(`mannWhitneyExactSf: U must be an integer without ties, got ${u}`);
  const counts = mannWhitneyExactCounts(m, n);
  const top = m * n;
  if (u <= 0) return 1;
  if (u > top) return 0;
  let total = 0;
  for (const c of counts) total += c;
  let tail = 0;
  if (2 * u > top) {
    // P(U ≥ u) = P(U ≤ mn − u) by symmetry.
    for (let k = 0; k <= top - u; k++) tail += counts[k] as number;
    return tail / total;
  }
  for (let k = 0; k < u; k++) tail += counts[k] as number;
  return (total - tail) / total;
}
