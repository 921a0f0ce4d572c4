/** Ranks 1..n with ties given the average of the ranks they span (the "fractional" ranking). */
export function averageRanks(x: readonly number[]): number[] {
  const order = x.map((_, i) => i).sort((a, b) => (x[a] as number) - (x[b] as number));
  const ranks = new Array<number>(x.length);
  let i = 0;
  while (i < order.length) {
    let j = i;
    while (j + 1 < order.length && x[order[j + 1] as number] === x[order[i] as number]) j++;
    const r = (i + j) / 2 + 1;
    for (let k = i; k <= j; k++) ranks[order[k] as number] = r;
    i = j + 1;
  }
  return ranks;
}
