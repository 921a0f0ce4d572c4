import { checkPlan, type TripPlan } from './plan.js';
import type { Topic } from './client.js';
import type { AdvisoryTask } from './tasks.js';

/**
 * The reward of `gymflow/advisory-v0` (the "every hard constraint met × how close the value is to
 * the best possible"; the checks follow TravelPlanner's hard constraints):
 *
 * `reward = elicited × constraints × value`, where
 *
 * - `elicited` (0/1): before recommending, the agent asked about every topic (`policy.ts`); `info.missing_topics`
 *   lists the others. Recommending without asking is guessing, even when the guess happens to fit;
 * - `constraints` (0/1): every check of `checkPlan` holds (`info.checks`, `info.failed` names the failures);
 * - `value` (0-1): the plan's value over the best plan's value within the constraints (`info.best`), to 4
 *   decimals (a plan that breaks no constraint cannot beat the best, so it is at most 1).
 *
 * Success (the pass/fail metric): reward ≥ {@link ADVISORY_SUCCESS_THRESHOLD}, i.e. asked, feasible and
 * within 5% of the optimum. No recommendation scores 0 (`terms.recommended` false).
 *
 * Worked example (`__fixtures__/lisbon.ts`, tested in `reward.test.ts`): two travellers, 3 nights, $1,500, a
 * 3-star hotel with breakfast, nonstop, one food activity. The best plan — nonstop fares $200 + $180, a hotel
 * scored 8.0 at $150 a night, a food tour scored 9.0 at $50 — costs (200 + 180) × 2 + 150 × 3 + 50 × 2 = $1,310
 * and is worth 3 × 8.0 + 9.0 = 33.0: reward 1. The same plan in a hotel scored 6.5 meets every constraint and is
 * worth 28.5: reward 28.5 / 33 = 0.8636, not a success. The best-rated hotel (9.5, $250 a night) makes it
 * $1,610: `budget` fails, reward 0. The best plan without having asked about the activities: reward 0.
 */

/** The least reward that counts as a success. */
export const ADVISORY_SUCCESS_THRESHOLD = 0.95;

/** Scores the episode's recommendation (undefined: none was made); `missingTopics`: the topics never asked about. */
export function scoreRecommendation(task: AdvisoryTask, plan: TripPlan | undefined, missingTopics: readonly Topic[]): { reward: number; success: boolean; info: Record<string, unknown> } {
  const best = { ...task.best };
  const elicited = missingTopics.length === 0;
  if (!plan) {
    return { reward: 0, success: false, info: { terms: { recommended: false, elicited, constraints: false, value: 0 }, missing_topics: missingTopics, checks: [], failed: [], best } };
  }
  const { checks, priced } = checkPlan(task.request, plan, task.world);
  const failed = checks.filter((c) => !c.ok).map((c) => c.name);
  const constraints = failed.length === 0;
  const value = priced ? Math.round(Math.min(1, priced.value / task.best.value) * 10_000) / 10_000 : 0;
  const reward = elicited && constraints ? value : 0;
  return {
    reward,
    success: reward >= ADVISORY_SUCCESS_THRESHOLD,
    info: {
      terms: { recommended: true, elicited, constraints, value },
      missing_topics: missingTopics,
      checks,
      failed,
      plan: { ...plan, ...(priced ?? {}) },
      best,
    },
  };
}
