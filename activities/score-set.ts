/**
 * Scoring a set of trajectories as a pipeline's `reward` section says: the one place that turns the section into
 * scores, shared by the pipeline's Reward stage (`scoreRollouts`) and `gymflow reward rescore`, so a rescored set
 * is scored exactly as a run with that section would have scored it.
 *
 * Plain library code (no activity context): the caller reports progress and checks for cancellation.
 */
import type { Trajectory } from '../src/core/trajectory.js';
import { mapPool } from '../src/hub/pool.js';
import type { ArtifactStore } from '../src/hub/store/store.js';
import { rulesEnabled, type RewardSection } from '../src/loop/config.js';
import { scoreTrajectory } from '../src/reward/score.js';
import { scoreLayers } from './reward.js';

/**
 * `trajectories` scored with the section's layers (the rules of its `profile`, else of `envId`'s domain; the judge's
 * recorded verdicts `judgements`, from `judgeRollouts`; the calibration; the learned model), in input order, with
 * the lineage of what scored them; the input itself when the rules are off. `onScored(done, total)` follows the
 * progress. A section with a judge and no `judgements` is scored without the judge layer (the lineage says so).
 */
export async function scoreWithRewardSection(
  store: ArtifactStore,
  trajectories: readonly Trajectory[],
  reward: RewardSection,
  envId: string,
  options: { judgements?: string | undefined; onScored?: (done: number, total: number) => void } = {},
): Promise<{ scored: Trajectory[]; lineage: Record<string, unknown> }> {
  if (!rulesEnabled(reward)) return { scored: [...trajectories], lineage: { layers: [] } };
  const layers = await scoreLayers(store, reward, envId, options.judgements);
  try {
    let done = 0;
    const scored = await mapPool(trajectories, reward.concurrency, async (t) => {
      const s = await scoreTrajectory(t, layers.options);
      options.onScored?.(++done, trajectories.length);
      return s;
    });
    return { scored, lineage: layers.lineage };
  } finally {
    await layers.release();
  }
}
