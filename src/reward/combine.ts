import { ConfigError } from '../core/errors.js';
import type { RewardLayer } from './rubrics.js';
import { slabArray } from './rules/slab.js';
import type { ScoreCalibration } from './types.js';

/**
 * The combination rule: how per-step rubric scores, the outcome and efficiency become step scores and a
 * trajectory summary. Pure arithmetic on numbers; `score.ts` gathers the inputs and builds the records.
 * `docs/reward.md` states the same formulas with worked examples.
 *
 * Notation: `w_r > 0` is the profile's weight of rubric `r` (`rubricWeights`, any scale: only ratios
 * matter); `s_{r,t} ∈ [0, 1]` the score of rubric `r` at step `t`, absent where the rubric does not apply
 * (a rule abstained, the judge gave no verdict, no judge ran); `R_t` the rubrics present at step `t`.
 *
 * 1. **Step score** `s_t = Σ_{r∈R_t} w_r·s_{r,t} / Σ_{r∈R_t} w_r`, and `s_t = 1` when `R_t` is empty
 *    (nothing found fault with the step). Outcome is not a step rubric. The weight recorded with each rubric
 *    in the step's block is its *effective* weight `w_r / Σ_{R_t} w`, so `score = Σ weight·score` over the
 *    block.
 * 2. **Rubric aggregate** `S_r = mean of s_{r,t}` over the steps where `r` is present; `r` is present in
 *    the trajectory when it is present at some step. Exceptions: `S_efficiency = E` (the efficiency rule's
 *    trajectory value, equal to the mean of its step scores and defined also for 0 steps) and
 *    `S_outcome = O`.
 * 3. **Process** `= Σ_{r∈P} w_r·S_r / Σ_{r∈P} w_r` over the present process rubrics `P` (every present
 *    rubric except outcome and efficiency); 1 when `P` is empty (it then carries no weight in the total).
 * 4. **Total** `= (w_o·O + w_e·E + Σ_{r∈P} w_r·S_r) / (w_o + w_e + Σ_{r∈P} w_r)`, each term only when its
 *    weight is > 0 — the weighted mean of the present rubrics' aggregates, so every rubric weighs in the
 *    total exactly as the profile says, however many steps it applies to. When no weighted rubric is
 *    present at all, total = O.
 * 5. **Layers**: the total split by origin — `env` = `w_o·O / W`, `rules`, `judge` and `learned` = the sums
 *    of their rubrics' `w_r·S_r / W` (W the denominator of 4). They add up to the total. (The learned reward
 *    model is one column, rubric `learned`, layer `learned`, weight `w_learned`: `score.ts`.)
 * 6. **Calibration** (when given) is applied to the quantity it was fitted on ({@link calibrationLevel}):
 *    - trajectory level (the default): `total = clamp(apply(total₄), 0, 1)` and `layers.human = total −
 *      total₄`, so the layers still add up to the total; step scores stay automatic;
 *    - step level: every step score becomes `clamp(apply(s_t), 0, 1)` (the automatic one is kept in the
 *      step's `humanCalibration` rubric rationale); the total and layers stay automatic.
 *
 * Note: process is *not* the mean of the step scores. The step scores are the dense per-step signal; the
 * summary weighs rubrics, not steps, so one undo among 30 steps costs what the regression weight says.
 */

/** One rubric's scores over the steps of a trajectory. */
export interface CombineColumn {
  readonly rubric: string;
  readonly layer: RewardLayer;
  /** The profile weight (> 0; columns with weight 0 should not be passed). */
  readonly weight: number;
  /** One score per step in [0, 1]; `NaN` where the rubric does not apply. */
  readonly scores: Float64Array;
}

/** What the combination needs. */
export interface CombineInput {
  /** Number of steps. */
  readonly steps: number;
  readonly columns: readonly CombineColumn[];
  /** Outcome `O` and its weight (0: the profile does not weight outcome). */
  readonly outcome: { readonly score: number; readonly weight: number };
  /**
   * Efficiency `E` and its weight. The efficiency column (if weighted) is passed among `columns` for the
   * step scores; its trajectory aggregate is this value.
   */
  readonly efficiency: { readonly score: number; readonly weight: number };
  readonly calibration?: ScoreCalibration | undefined;
}

/** The numbers of a combination. */
export interface CombineResult {
  /** `s_t` per step (calibrated when a step-level calibration was given). */
  readonly stepScores: Float64Array;
  /** `s_t` per step before calibration (the same array when no step-level calibration applied). */
  readonly rawStepScores: Float64Array;
  /** Which level a calibration was applied at, if any. */
  readonly calibratedLevel: 'step' | 'trajectory' | undefined;
  /** Effective weights per step and column: `effectiveWeights[c][t]` (0 where column c is absent at t). */
  readonly effectiveWeights: readonly Float64Array[];
  /** `S_r` per present rubric (outcome and efficiency included when weighted). */
  readonly rubricScores: Readonly<Record<string, number>>;
  readonly outcome: number;
  readonly efficiency: number;
  readonly process: number;
  /** The total before calibration. */
  readonly rawTotal: number;
  readonly total: number;
  readonly layers: Readonly<Record<string, number>>;
}

const EFFICIENCY = 'efficiency';

/** The weighted sums of the trajectory total, per rubric and per layer. */
class Totals {
  readonly rubricScores: Record<string, number> = {};
  readonly layerSums: Partial<Record<RewardLayer, number>> = {};
  totalNum = 0;
  totalDen = 0;

  add(rubric: string, layer: RewardLayer, weight: number, score: number): void {
    this.rubricScores[rubric] = score;
    this.totalNum += weight * score;
    this.totalDen += weight;
    this.layerSums[layer] = (this.layerSums[layer] ?? 0) + weight * score;
  }
}

/** Applies the combination rule (see the module documentation). */
export function combine(input: CombineInput): CombineResult {
  const n = input.steps;
  const cols = input.columns;
  const m = cols.length;
  const stepScores = slabArray(Float64Array, n);
  const effectiveWeights: Float64Array[] = new Array<Float64Array>(m);
  for (let c = 0; c < m; c++) effectiveWeights[c] = slabArray(Float64Array, n);
  const sums = new Float64Array(m);
  const counts = new Float64Array(m);
  for (let t = 0; t < n; t++) {
    let num = 0;
    let den = 0;
    for (let c = 0; c < m; c++) {
      const col = cols[c] as CombineColumn;
      const s = col.scores[t] as number;
      if (s !== s) continue; // NaN: not applicable
      num += col.weight * s;
      den += col.weight;
      sums[c] = (sums[c] as number) + s;
      counts[c] = (counts[c] as number) + 1;
    }
    if (den > 0) {
      stepScores[t] = num / den;
      for (let c = 0; c < m; c++) {
        const col = cols[c] as CombineColumn;
        const s = col.scores[t] as number;
        if (s === s) (effectiveWeights[c] as Float64Array)[t] = col.weight / den;
      }
    } else {
      stepScores[t] = 1;
    }
  }

  const totals = new Totals();
  let processNum = 0;
  let processDen = 0;
  const O = input.outcome.score;
  const E = input.efficiency.score;
  if (input.outcome.weight > 0) totals.add('outcome', 'env', input.outcome.weight, O);
  for (let c = 0; c < m; c++) {
    const col = cols[c] as CombineColumn;
    if (col.rubric === EFFICIENCY) continue;
    const k = counts[c] as number;
    if (k === 0) continue;
    const S = (sums[c] as number) / k;
    totals.add(col.rubric, col.layer, col.weight, S);
    processNum += col.weight * S;
    processDen += col.weight;
  }
  if (input.efficiency.weight > 0) totals.add(EFFICIENCY, 'rules', input.efficiency.weight, E);
  const { rubricScores, layerSums, totalNum, totalDen } = totals;

  const process = processDen > 0 ? processNum / processDen : 1;
  const layers: Record<string, number> = {};
  let rawTotal: number;
  if (totalDen > 0) {
    rawTotal = totalNum / totalDen;
    for (const [layer, v] of Object.entries(layerSums)) layers[layer] = v / totalDen;
  } else {
    rawTotal = O;
    layers['env'] = O;
  }
  let total = rawTotal;
  let calibrated = stepScores;
  const cal = input.calibration;
  const level = cal === undefined ? undefined : calibrationLevel(cal);
  if (cal !== undefined && level === 'trajectory') {
    total = calibrate(cal, rawTotal);
    layers['human'] = total - rawTotal;
  } else if (cal !== undefined && level === 'step') {
    calibrated = slabArray(Float64Array, n);
    for (let t = 0; t < n; t++) calibrated[t] = calibrate(cal, stepScores[t] as number);
  }
  return {
    stepScores: calibrated,
    rawStepScores: stepScores,
    calibratedLevel: level,
    effectiveWeights,
    rubricScores,
    outcome: O,
    efficiency: E,
    process,
    rawTotal,
    total,
    layers,
  };
}

function calibrate(cal: ScoreCalibration, score: number): number {
  const mapped = cal.apply(score);
  if (!Number.isFinite(mapped)) {
    throw new ConfigError(`calibration '${cal.kind}' returned ${String(mapped)} for score ${score}; it must return a finite number`);
  }
  return mapped <= 0 ? 0 : mapped >= 1 ? 1 : mapped;
}

const levels = new WeakMap<ScoreCalibration, 'step' | 'trajectory'>();

/**
 * The level a calibration was fitted at: its `level`, else `toJSON().fit.level` (how fitted calibrations
 * serialise it), else `'trajectory'`. Cached per calibration object.
 */
export function calibrationLevel(cal: ScoreCalibration): 'step' | 'trajectory' {
  if (cal.level !== undefined) return cal.level;
  let level = levels.get(cal);
  if (level === undefined) {
    const fit = cal.toJSON()['fit'];
    const l = fit !== null && typeof fit === 'object' ? (fit as Record<string, unknown>)['level'] : undefined;
    level = l === 'step' ? 'step' : 'trajectory';
    levels.set(cal, level);
  }
  return level;
}
