/**
 * The workflow of `bench/orchestration.ts`: the collection stage of the pipeline on its own — plan the
 * tasks, fan the shards out as `collectShard` activities (the pipeline's own activity, same options
 * shape), wait for all. Nothing else, so the benchmark measures what Temporal adds around the activities.
 */
import { proxyActivities, setHandler } from '@temporalio/workflow';
import type { createRolloutActivities } from '../activities/rollouts.js';
import { stageProgressSignal } from '../workflows/messages.js';

type RolloutActivities = ReturnType<typeof createRolloutActivities>;

// Same policy as the pipeline's collection: a shard may be retried (collect is idempotent: it stores a new set).
const { collectShard } = proxyActivities<RolloutActivities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '2 minutes',
  retry: { maximumAttempts: 3 },
});

/** The input of {@link collectBench}: one `collectShard` input per shard. */
export interface CollectBenchInput {
  shards: unknown[];
}

/** Runs every shard in parallel; returns the episodes collected. */
export async function collectBench(input: CollectBenchInput): Promise<{ episodes: number; successes: number; refs: string[] }> {
  // The activities report progress by signal; accept and drop it.
  setHandler(stageProgressSignal, () => undefined);
  const results = await Promise.all(input.shards.map((shard) => collectShard(shard)));
  return {
    episodes: results.reduce((a, r) => a + r.summary.episodes, 0),
    successes: results.reduce((a, r) => a + r.summary.successes, 0),
    refs: results.map((r) => r.ref),
  };
}
