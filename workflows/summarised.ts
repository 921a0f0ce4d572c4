/**
 * Activities scheduled with a one-line summary (src/loop/summaries.ts), which the Web UI shows in the workflow's
 * timeline and event history. The summary travels as the schedule command's user metadata: replay does not compare
 * it, so histories recorded before summaries existed replay unchanged.
 */
import type { ActivityFunction } from '@temporalio/common';
import type { ActivityFunctionWithOptions, LocalActivityFunctionWithOptions } from '@temporalio/workflow';

/**
 * `fn` (a binding of `proxyActivities` or `proxyLocalActivities`) with `summary` added to its options for the calls
 * made through the result; the binding's other options stay as they were.
 *
 * @example
 * await summarised(a.train, activitySummary({ iteration, what: 'train sft', env }))({ ... });
 */
export function summarised<F extends ActivityFunction>(fn: ActivityFunctionWithOptions<F> | LocalActivityFunctionWithOptions<F>, summary: string): F {
  return ((...args: Parameters<F>) => fn.executeWithOptions({ summary }, args)) as F;
}
