import { CancellationScope, isCancellation } from '@temporalio/workflow';

/**
 * `Promise.all(items.map(call))` for activity calls, except that nothing is left running when it rejects: the calls
 * run in a scope of their own, the first failure cancels it, and every call is awaited to its end. Rejects with the
 * first failure that is not a cancellation, else the first cancellation — so a stage cancelled while its shards run
 * ends only once every shard has cleaned up (its sandboxes removed), and a shard that fails for good stops the
 * others rather than leave them collecting for a stage that has already failed.
 */
export async function allOrNone<I, T>(items: readonly I[], call: (item: I, index: number) => Promise<T>): Promise<T[]> {
  const scope = new CancellationScope();
  let failure: { err: unknown } | undefined;
  const settled = await scope.run(() =>
    Promise.all(
      items.map((item, i) =>
        call(item, i).then(
          (value) => ({ value }),
          (err: unknown) => {
            if (failure === undefined) scope.cancel();
            if (failure === undefined || (isCancellation(failure.err) && !isCancellation(err))) failure = { err };
            return undefined;
          },
        ),
      ),
    ),
  );
  if (failure !== undefined) throw failure.err;
  return settled.map((s) => (s as { value: T }).value);
}
