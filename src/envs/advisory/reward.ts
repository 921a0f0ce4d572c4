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
 * Worked example: the best plan is worth 59.5 (5 nights × 8.1 + 9.4 + 5.1 + 4.5). A plan with every
 * constraint met, in a hotel scored 7.4 with the same activities, is worth 56.0: reward 56.0 / 59.5 = 0.9412,
 * not a success. The same plan $30 over the budget: `budget` fails, reward 0.
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
