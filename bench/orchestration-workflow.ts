/**
 * The workflow of `bench/orchestration.ts`: the collection stage of the pipeline on its own — fan the shards
 * out as `collectShard` activities or local activities (`collect.shard_execution`), with the pipeline's own
 * options, and wait for all. Nothing else, so the benchmark measures what Temporal adds around the shards.
 * With `noop`, the same shards go to an activity that returns at once (`noopShard`): what the workflow costs
 * with no work in it, Temporal's own part.
 */
import { proxyActivities, proxyLocalActivities, setHandler } from '@temporalio/workflow';
import type { createRolloutActivities } from '../activities/rollouts.js';
import { LOCAL_SHARD_OPTIONS, SHARD_OPTIONS } from '../workflows/activity-options.js';
import { stageProgressSignal } from '../workflows/messages.js';

/** The rollout activities, and the benchmark's own one that does nothing (`noopShard`). */
type BenchActivities = ReturnType<typeof createRolloutActivities> & {
  noopShard(shard: unknown): Promise<{ summary: { episodes: number; successes: number }; ref: string }>;
};

// The worker that runs this workflow polls one task queue, so the activities go to it (the pipeline names its CPU queue).
const remote = proxyActivities<BenchActivities>(SHARD_OPTIONS);
const local = proxyLocalActivities<BenchActivities>(LOCAL_SHARD_OPTIONS);

/** The input of {@link collectBench}: one `collectShard` input per shard, and how the shards run. */
export interface CollectBenchInput {
  shards: unknown[];
  execution: 'activity' | 'local';
  /** Each shard to `noopShard` instead of `collectShard`. */
  noop?: boolean;
}

/** Runs every shard in parallel; returns the episodes collected. */
export async function collectBench(input: CollectBenchInput): Promise<{ episodes: number; successes: number; refs: string[] }> {
  // The activities report progress by signal; accept and drop it.
  setHandler(stageProgressSignal, () => undefined);
  const activities = input.execution === 'local' ? local : remote;
  const shardActivity = input.noop === true ? activities.noopShard : activities.collectShard;
  const results = await Promise.all(input.shards.map((shard) => shardActivity(shard)));
  return {
    episodes: results.reduce((a, r) => a + r.summary.episodes, 0),
    successes: results.reduce((a, r) => a + r.summary.successes, 0),
    refs: results.map((r) => r.ref),
  };
}
