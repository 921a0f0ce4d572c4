import { assertSameLength } from './descriptive.js';

/**
 * Pair counts of two paired variables, in O(n log n) (Knight's algorithm, as scipy's `kendalltau`).
 * Over the n(n−1)/2 unordered pairs: `concordant` and `discordant` count pairs ordered the same /
 * opposite way in both; `tiedX` pairs tied in x (including those also tied in y), `tiedY` likewise,
 * `tiedBoth` pairs tied in both.
 */
export interface PairCounts {
  pairs: number;
  concordant: number;
  discordant: number;
  tiedX: number;
  tiedY: number;
  tiedBoth: number;
}

/** Counts concordant, discordant and tied pairs of (x, y); see {@link PairCounts}. */
export function pairCounts(x: readonly number[], y: readonly number[]): PairCounts {
  assertSameLength(x, y, 'pairCounts');
  const n = x.length;
  const idx = x.map((_, i) => i).sort((a, b) => (x[a] as number) - (x[b] as number) || (y[a] as number) - (y[b] as number));
  const xs = idx.map((i) => x[i] as number);
  const ys = idx.map((i) => y[i] as number);
  const tiesIn = (v: readonly number[]): number => {
    const sorted = [...v].sort((a, b) => a - b);
    let t = 0;
    let run = 1;
    for (let i = 1; i <= sorted.length; i++) {
      if (i < sorted.length && sorted[i] === sorted[i - 1]) run++;
      else {
        t += (run * (run - 1)) / 2;
        run = 1;
      }
    }
    return t;
  };
  let tiedBoth = 0;
  let run = 1;
  for (let i = 1; i <= n; i++) {
    if (i < n && xs[i] === xs[i - 1] && ys[i] === ys[i - 1]) run++;
    else {
      tiedBoth += (run * (run - 1)) / 2;
      run = 1;
    }
  }
  // Sorted by (x, y), a pair is discordant exactly when it is an inversion of y (strictly): pairs tied
  // in x are already in y order, so they never count.
  const discordant = countInversions(ys);
  const pairs = (n * (n - 1)) / 2;
  const tiedX = tiesIn(x);
  const tiedY = tiesIn(y);
  const untied = pairs - tiedX - tiedY + tiedBoth;
  return { pairs, concordant: untied - discordant, discordant, tiedX, tiedY, tiedBoth };
}

function countInversions(values: readonly number[]): number {
  const a = [...values];
  const buf = new Array<number>(a.length);
  let inversions = 0;
  for (let width = 1; width < a.length; width *= 2) {
    for (let lo = 0; lo < a.length; lo += 2 * width) {
      const mid = Math.min(lo + width, a.length);
      const hi = Math.min(lo + 2 * width, a.length);
      let i = lo;
      let j = mid;
      let k = lo;
      while (i < mid && j < hi) {
        if ((a[j] as number) < (a[i] as number)) {
          inversions += mid - i;
          buf[k++] = a[j++] as number;
        } else buf[k++] = a[i++] as number;
      }
      while (i < mid) buf[k++] = a[i++] as number;
      while (j < hi) buf[k++] = a[j++] as number;
      for (let t = lo; t < hi; t++) a[t] = buf[t] as number;
    }
  }
  return inversions;
}

/**
 * Kendall's tau-b: (C − D) / sqrt((P − Tx)(P − Ty)), where P is the number of pairs and Tx, Ty the pairs
 * tied in x and in y. Equals scipy's `kendalltau(x, y)` (variant 'b'). `NaN` when either variable is
 * constant.
 */
export function kendallTauB(x: readonly number[], y: readonly number[]): number {
  if (x.some(Number.isNaN) || y.some(Number.isNaN)) return Number.NaN;
  const c = pairCounts(x, y);
  const denom = Math.sqrt((c.pairs - c.tiedX) * (c.pairs - c.tiedY));
  if (!(denom > 0)) return Number.NaN;
  return Math.max(-1, Math.min(1, (c.concordant - c.discordant) / denom));
}
