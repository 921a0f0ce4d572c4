/**
 * Runs `fn` over `items` with at most `concurrency` calls in flight and returns the results in input
 * order. The first rejection stops new calls and is rethrown once the calls in flight have settled.
 *
 * @example
 * ```ts
 * const sizes = await mapPool(files, 8, async (f) => (await stat(f)).size);
 * ```
 */
export async function mapPool<T, R>(items: readonly T[], concurrency: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  let failed = false;
  let failure: unknown;
  const worker = async (): Promise<void> => {
    while (!failed && next < items.length) {
      const i = next++;
      try {
        out[i] = await fn(items[i] as T, i);
      } catch (err) {
        if (!failed) failure = err;
        failed = true;
      }
    }
  };
  const n = Math.max(1, Math.min(concurrency, items.length));
  await Promise.all(Array.from({ length: n }, worker));
  if (failed) throw failure;
  return out;
}
