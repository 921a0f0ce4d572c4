/**
 * The workflow of `bench/orchestration.ts`: the collection stage of the pipeline on its own — fan the shards
 * out as `collectShard` activities or local activities (`collect.shard_execution`), with the pipeline's own
 * options, and wait for all. Nothing else, so the benchmark measures what Temporal adds around the shards.
 */
import { proxyActivities, proxyLocalActivities, setHandler } from '@temporalio/workflow';
import type { createRolloutActivities } from '../activities/rollouts.js';
import { LOCAL_SHARD_OPTIONS, SHARD_OPTIONS } from '../workflows/activity-options.js';
import { stageProgressSignal } from '../workflows/messages.js';

type RolloutActivities = ReturnType<typeof createRolloutActivities>;

// The worker that runs this workflow polls one task queue, so the activities go to it (the pipeline names its CPU queue).
const remote = proxyActivities<RolloutActivities>(SHARD_OPTIONS);
const local = proxyLocalActivities<RolloutActivities>(LOCAL_SHARD_OPTIONS);

/** The input of {@link collectBench}: one `collectShard` input per shard, and how the shards run. */
export interface CollectBenchInput {
  shards: unknown[];
  execution: 'activity' | 'local';
}

/** Runs every shard in parallel; returns the episodes collected. */
export async function collectBench(input: CollectBenchInput): Promise<{ episodes: number; successes: number; refs: string[] }> {
  // The activities report progress by signal; accept and drop it.
  setHandler(stageProgressSignal, () => undefined);
  const { collectShard } = input.execution === 'local' ? local : remote;
  const results = await Promise.all(input.shards.map((shard) => collectShard(shard)));
  return {
    episodes: results.reduce((a, r) => a + r.summary.episodes, 0),
    successes: results.reduce((a, r) => a + r.summary.successes, 0),
    refs: results.map((r) => r.ref),
  };
}
