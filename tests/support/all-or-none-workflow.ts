/**
 * The workflow of `tests/all-or-none.test.ts`: runs one `shard` activity per entry of `plan` through `allOrNone` (or,
 * for comparison, `Promise.all`) and returns their results.
 */
import { ActivityCancellationType, proxyActivities } from '@temporalio/workflow';
import { allOrNone } from '../../workflows/all-or-none.js';

/** What a test shard does: return after `ms`, or fail for good after `ms`. Cancelled, it takes `cleanupMs` to stop. */
export interface ShardPlan {
  name: string;
  ms: number;
  fail?: boolean;
  cleanupMs: number;
}

/** The activity the test worker registers. */
export interface ShardActivities {
  shard(plan: ShardPlan): Promise<string>;
}

const { shard } = proxyActivities<ShardActivities>({
  startToCloseTimeout: '1 minute',
  heartbeatTimeout: '2 seconds',
  retry: { maximumAttempts: 1 },
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
});

export async function shardsWorkflow(plan: ShardPlan[], fanOut: 'allOrNone' | 'Promise.all'): Promise<string[]> {
  return fanOut === 'allOrNone' ? allOrNone(plan, (p) => shard(p)) : Promise.all(plan.map((p) => shard(p)));
}
