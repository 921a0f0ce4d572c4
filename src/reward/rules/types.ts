import type { RuleContext } from './context.js';

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
  // One backing buffer for the four arrays: creating an ArrayBuffer costs far more than a view on one
  // (a column took ~2.6 µs with four buffers, ~1.1 with one), and on short trajectories that was 15% of
  // the rules' time. Layout: scores (8 bytes a step), refs, counts (4), codes (1); offsets stay aligned.
  const buffer = new ArrayBuffer(17 * n);
  const scores = new Float64Array(buffer, 0, n).fill(Number.NaN);
  const refs = new Int32Array(buffer, 8 * n, n).fill(-1);
  return { rubric, scores, codes: new Uint8Array(buffer, 16 * n, n), refs, counts: new Int32Array(buffer, 12 * n, n) };
}

/** The score of a step in a column, or `undefined` where the rule does not apply. */
export function columnScore(column: RuleColumn, position: number): number | undefined {
  const s = column.scores[position];
  return s === undefined || Number.isNaN(s) ? undefined : s;
}
