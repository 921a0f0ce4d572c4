/**
 * Scoring a set of trajectories as a pipeline's `reward` section says: the one place that turns the section into
 * scores, shared by the pipeline's Reward stage (`scoreRollouts`) and `gymflow reward rescore`, so a rescored set
 * is scored exactly as a run with that section would have scored it.
 *
 * Plain library code (no activity context): the caller reports progress and checks for cancellation.
 */
import { getProfile } from '../src/core/profiles/index.js';
import { spec } from '../src/core/registry.js';
import type { Trajectory } from '../src/core/trajectory.js';
import { mapPool } from '../src/hub/pool.js';
import type { RewardSection } from '../src/loop/config.js';
import { scoreTrajectory } from '../src/reward/score.js';

/**
 * `trajectories` scored with the section's reward (the rules of its `profile`, else of `envId`'s domain), in
 * input order; the input itself when the section is disabled. `onScored(done, total)` follows the progress.
 */
export async function scoreWithRewardSection(
  trajectories: readonly Trajectory[],
  reward: RewardSection,
  envId: string,
  onScored?: (done: number, total: number) => void,
): Promise<Trajectory[]> {
  if (!reward.enabled) return [...trajectories];
  const profile = getProfile(reward.profile ?? spec(envId).domain);
  let done = 0;
  return mapPool(trajectories, reward.concurrency, async (t) => {
    const s = await scoreTrajectory(t, { profile });
    onScored?.(++done, trajectories.length);
    return s;
  });
}
