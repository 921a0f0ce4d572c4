import type { RuleContext } from './context.js';
import { emptyColumn, type RuleColumn, type StepRule } from './types.js';

/**
 * Efficiency: how many steps the agent took against a reference `R` (the reference solution's length
 * when given, else the profile's `stepBudget`).
 *
 * - Trajectory: `E = min(1, R / n)` for `n ≥ 1` steps; `E = 1` for an empty trajectory.
 * - Step at position `i` (0-based): `e_i = clamp(R − i, 0, 1)` — every step within the reference scores 1,
 *   every step beyond it 0, and when `R` is fractional the step that straddles it scores the fraction.
 *
 * The two agree exactly: `Σ_i e_i = min(n, R)`, so the mean step score is `E`. Efficiency applies to every
 * step (a `think` step costs a step too).
 */

/** Reason codes of the efficiency rule. */
export const EfficiencyCode = {
  WITHIN: 1,
  STRADDLES: 2,
  BEYOND: 3,
} as const;

/** Trajectory-level efficiency `min(1, R / n)` (1 when `n = 0`). */
export function trajectoryEfficiency(steps: number, referenceSteps: number): number {
  return steps === 0 ? 1 : Math.min(1, referenceSteps / steps);
}

/** Per-step efficiency `clamp(R − i, 0, 1)` of the step at 0-based position `i`. */
export function stepEfficiency(position: number, referenceSteps: number): number {
  const e = referenceSteps - position;
  return e >= 1 ? 1 : e <= 0 ? 0 : e;
}

/** Scores every step for efficiency. */
export function scoreEfficiency(ctx: RuleContext): RuleColumn {
  const n = ctx.steps.length;
  const R = ctx.referenceSteps;
  const col = emptyColumn('efficiency', n);
  const { scores, codes, counts } = col;
  for (let i = 0; i < n; i++) {
    const e = stepEfficiency(i, R);
    scores[i] = e;
    codes[i] = e === 1 ? EfficiencyCode.WITHIN : e === 0 ? EfficiencyCode.BEYOND : EfficiencyCode.STRADDLES;
    counts[i] = i + 1;
  }
  return col;
}

/** The efficiency rule. `count` carries the 1-based step number, the rationale needs `R` from the context. */
export function efficiencyRule(referenceSteps: number): StepRule {
  return {
    rubric: 'efficiency',
    run: scoreEfficiency,
    rationale(code, _ref, count) {
      switch (code) {
        case EfficiencyCode.WITHIN:
          return `step ${count} of a reference ${referenceSteps}`;
        case EfficiencyCode.STRADDLES:
          return `step ${count} straddles the reference ${referenceSteps}`;
        case EfficiencyCode.BEYOND:
          return `step ${count} is beyond the reference ${referenceSteps}`;
        default:
          return '';
      }
    },
  };
}
