/**
 * The activity of the smoke workflow (`workflows/smoke.ts`): proves that a worker runs activities against a
 * real Temporal server. It has no part in the pipeline.
 */
import { activityInfo, heartbeat } from '@temporalio/activity';

/** Greets `name`; heartbeats once so the heartbeat path is exercised too. */
export async function smokeGreet(name: string): Promise<string> {
  heartbeat({ stage: 'greeting' });
  return `hello, ${name} (attempt ${activityInfo().attempt})`;
}
