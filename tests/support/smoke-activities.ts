/**
 * The activity of the smoke workflow (`tests/support/smoke-workflow.ts`): proves that a worker runs activities
 * against a real Temporal server. It has no part in the pipeline; only the smoke test's worker registers it.
 */
import { activityInfo, heartbeat } from '@temporalio/activity';

/** Greets `name`; heartbeats once so the heartbeat path is exercised too. */
export async function smokeGreet(name: string): Promise<string> {
  heartbeat({ stage: 'greeting' });
  return `hello, ${name} (attempt ${activityInfo().attempt})`;
}
