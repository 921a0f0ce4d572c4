import type { RuleContext } from './context.js';
import { slabArray } from './slab.js';

/**
 * The shape of a rule's result. Rules write columns of numbers (one entry per step) rather than an object
 * per step, so the hot loop allocates nothing; rationales are rendered from a small code and a step
 * reference only when the scored trajectory is built.
 */

/** Names of the rubrics the rule layer scores per step. */
export type StepRuleRubric = 'redundancy' | 'regression' | 'informationUse' | 'efficiency';

/** One rule's verdicts on every step of a trajectory. */
export interface RuleColumn {
  readonly rubric: StepRuleRubric;
  /** Score of each step in [0, 1]; `NaN` where the rule does not apply to the step. */
  readonly scores: Float64Array;
  /** A rule-specific reason code per step, rendered by the rule's `rationale`. */
  readonly codes: Uint8Array;
  /** A step position the reason refers to (the repeated step, the undone step, …), or -1. */
  readonly refs: Int32Array;
  /** A count the reason mentions (tokens used, …), or 0. */
  readonly counts: Int32Array;
}

/** A deterministic, per-step rule of the rule layer. */
export interface StepRule {
  readonly rubric: StepRuleRubric;
  /** Scores every step of the prepared trajectory. Work is linear in the trajectory's size. */
  run(ctx: RuleContext): RuleColumn;
  /**
   * A short rationale for a step's verdict. `stepLabel` turns a step position from `refs` into the number
   * shown to people (the step's `index`).
   */
  rationale(code: number, ref: number, count: number, stepLabel: (position: number) => number): string;
}

/** Allocates an empty column for `n` steps (every score `NaN`: not applicable). */
export function emptyColumn(rubric: StepRuleRubric, n: number): RuleColumn {
  return {
    rubric,
    scores: slabArray(Float64Array, n).fill(Number.NaN),
    codes: slabArray(Uint8Array, n),
    refs: slabArray(Int32Array, n).fill(-1),
    counts: slabArray(Int32Array, n),
  };
}
