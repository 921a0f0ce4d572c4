import type { Outcome } from '../../core/trajectory.js';

/**
 * Outcome: the environment's verdict on the whole episode.
 *
 * `O = 1` when `outcome.success` is true, else `clamp(outcome.score, 0, 1)`. (Environments set
 * `success` only at full score; trusting `success` also covers converted logs that record a success
 * without a score.)
 *
 * Outcome is a trajectory-level rubric and appears on **no step**: it enters the trajectory `total` once,
 * with its profile weight. Copying it onto the last step would count it twice in any sum of step rewards
 * plus outcome, and would make that step's process score depend on how the episode ended rather than on
 * what the step did. A trainer that wants a terminal reward takes `reward.outcome` from the summary.
 */
export function outcomeScore(outcome: Pick<Outcome, 'success' | 'score'>): number {
  if (outcome.success) return 1;
  const s = outcome.score;
  return s <= 0 ? 0 : s >= 1 ? 1 : s;
}
