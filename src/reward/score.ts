import { ConfigError } from '../core/errors.js';
import type { DomainProfile } from '../core/profiles/profile.js';
import type { StepReward, Trajectory, TrajectoryReward, TrajectoryStep } from '../core/trajectory.js';
import { combine, type CombineColumn } from './combine.js';
import { outcomeScore } from './rules/outcome.js';
import { trajectoryEfficiency } from './rules/efficiency.js';
import { runRules, type RuleRun } from './rules/run.js';
import type { RuleColumn, StepRule } from './rules/types.js';
import { weightedJudgeRubrics, type RewardLayer } from './rubrics.js';
import type { LearnedLayerOptions, RubricDefinition, ScoreCalibration, ScoreOptions, StepJudgement } from './types.js';

/**
 * The scorer: runs the reward layers over a trajectory and writes every step's `reward` block and the
 * trajectory's `reward` summary. The combination rule is in `combine.ts` (and `docs/reward.md`).
 *
 * The scorer never mutates its input: it returns a new trajectory whose steps are new objects (other
 * sub-objects — actions, params, metadata — are shared with the input). Rewards are not part of the
 * trajectory id, so the id is kept.
 */

/** A rubric's scores over the steps, ready for combination and for rendering into step blocks. */
export interface ScoredColumn extends CombineColumn {
  /** The rationale shown for the step at `position`, if any. */
  rationale(position: number): string | undefined;
}

/**
 * A rule's column for combination and rendering. A class rather than an object with a closure: the scorer
 * builds four per trajectory, and on short trajectories the closures (under tsx each also wrapped by
 * esbuild's `__name`) were a visible part of the scorer's time.
 */
class RuleScoredColumn implements ScoredColumn {
  readonly layer = 'rules';
  readonly rubric: string;
  readonly scores: Float64Array;

  constructor(
    private readonly rule: StepRule,
    private readonly column: RuleColumn,
    readonly weight: number,
    private readonly label: (position: number) => number,
  ) {
    this.rubric = column.rubric;
    this.scores = column.scores;
  }

  rationale(p: number): string {
    const c = this.column;
    return this.rule.rationale(c.codes[p] as number, c.refs[p] as number, c.counts[p] as number, this.label);
  }
}

/** The number people see for the step at a position: its `index`. */
function stepLabels(steps: readonly TrajectoryStep[]): (position: number) => number {
  return (p) => steps[p]?.index ?? p;
}

/**
 * Turns the judge's verdicts into columns, one per requested rubric. Verdicts are matched to steps by
 * `stepIndex` = `step.index`; verdicts for unknown steps or rubrics that were not requested are ignored,
 * scores are clamped to [0, 1] and non-finite ones dropped (the rubric is then absent at that step).
 */
export function judgeColumns(
  steps: readonly TrajectoryStep[],
  judgements: readonly StepJudgement[],
  rubrics: readonly RubricDefinition[],
  weights: Readonly<Record<string, number>>,
): ScoredColumn[] {
  const n = steps.length;
  const positions = new Map<number, number>();
  steps.forEach((s, p) => {
    if (!positions.has(s.index)) positions.set(s.index, p);
  });
  const out: ScoredColumn[] = [];
  const byName = new Map<string, { scores: Float64Array; notes: (string | undefined)[] }>();
  for (const r of rubrics) {
    const scores = new Float64Array(n).fill(Number.NaN);
    const notes = new Array<string | undefined>(n).fill(undefined);
    byName.set(r.name, { scores, notes });
    out.push({ rubric: r.name, layer: 'judge', weight: weights[r.name] ?? 0, scores, rationale: (p) => notes[p] });
  }
  for (const j of judgements) {
    const p = positions.get(j.stepIndex);
    if (p === undefined) continue;
    for (const [name, result] of Object.entries(j.rubrics)) {
      const col = byName.get(name);
      if (col === undefined || !Number.isFinite(result.score)) continue;
      col.scores[p] = result.score <= 0 ? 0 : result.score >= 1 ? 1 : result.score;
      col.notes[p] = result.rationale;
    }
  }
  return out.filter((c) => c.weight > 0);
}

/** The rubric the learned reward model scores (layer `learned`). */
export const LEARNED_RUBRIC = 'learned';

/**
 * The learned layer's column: the scorer's step scores (clamped to [0, 1]; a non-finite score is an error)
 * under the rubric `learned` with weight `learned.weight`.
 *
 * @throws ConfigError for a weight that is not a finite number > 0, or a scorer that returns the wrong
 *   number of scores or a non-finite one.
 */
export async function learnedColumn(t: Trajectory, learned: LearnedLayerOptions): Promise<ScoredColumn> {
  const { scorer, weight } = learned;
  if (!(weight > 0) || !Number.isFinite(weight)) throw new ConfigError(`learned reward weight must be a finite number > 0, got ${weight}`);
  const raw = await scorer.scoreSteps(t);
  if (raw.length !== t.steps.length) {
    throw new ConfigError(`learned reward model ${scorer.name} returned ${raw.length} scores for trajectory ${t.id} with ${t.steps.length} steps`);
  }
  const scores = new Float64Array(raw.length);
  for (let p = 0; p < raw.length; p++) {
    const s = raw[p] as number;
    if (!Number.isFinite(s)) throw new ConfigError(`learned reward model ${scorer.name} returned ${s} for step ${p} of trajectory ${t.id}`);
    scores[p] = s <= 0 ? 0 : s >= 1 ? 1 : s;
  }
  return { rubric: LEARNED_RUBRIC, layer: 'learned', weight, scores, rationale: () => undefined };
}

function rounded(x: number): number {
  // Keeps JSON short and stable without changing any score that matters (1e-12 relative).
  return Math.round(x * 1e12) / 1e12;
}

function assemble(t: Trajectory, profile: DomainProfile, run: RuleRun, extra: readonly ScoredColumn[], calibration: ScoreCalibration | undefined): Trajectory {
  const steps = t.steps;
  const label = stepLabels(steps);
  const weights = profile.rubricWeights;
  const columns: ScoredColumn[] = [];
  for (let k = 0; k < run.columns.length; k++) {
    const c = run.columns[k] as RuleColumn;
    const w = weights[c.rubric] ?? 0;
    if (w > 0) columns.push(new RuleScoredColumn(run.rules[k] as StepRule, c, w, label));
  }
  for (const c of extra) columns.push(c);
  const result = combine({
    steps: steps.length,
    columns,
    outcome: { score: outcomeScore(t.outcome), weight: weights['outcome'] ?? 0 },
    efficiency: { score: trajectoryEfficiency(steps.length, run.ctx.referenceSteps), weight: weights['efficiency'] ?? 0 },
    calibration,
  });
  const m = columns.length;
  const scoredSteps: TrajectoryStep[] = new Array<TrajectoryStep>(steps.length);
  for (let p = 0; p < steps.length; p++) {
    const rubrics: StepReward['rubrics'] = {};
    for (let c = 0; c < m; c++) {
      const col = columns[c] as ScoredColumn;
      const s = col.scores[p] as number;
      if (s !== s) continue;
      const rationale = col.rationale(p);
      const layer: RewardLayer = col.layer;
      rubrics[col.rubric] =
        rationale === undefined
          ? { score: s, layer, weight: rounded((result.effectiveWeights[c] as Float64Array)[p] as number) }
          : { score: s, layer, weight: rounded((result.effectiveWeights[c] as Float64Array)[p] as number), rationale };
    }
    if (result.calibratedLevel === 'step') {
      const score = result.stepScores[p] as number;
      rubrics['humanCalibration'] = { score, layer: 'human', rationale: `${calibration?.kind ?? 'calibration'} of the automatic step score ${result.rawStepScores[p] as number}` };
    }
    scoredSteps[p] = { ...(steps[p] as TrajectoryStep), reward: { score: result.stepScores[p] as number, rubrics } };
  }
  const summary: TrajectoryReward = {
    total: result.total,
    outcome: result.outcome,
    process: result.process,
    efficiency: result.efficiency,
    layers: { ...result.layers },
  };
  return { ...t, steps: scoredSteps, reward: summary };
}

/**
 * Scores a trajectory with the rule layer only: synchronous, no I/O — the fast path for bulk scoring
 * and the benchmark. Judge rubrics the profile weights are absent (their weight is renormalised away).
 *
 * @param referenceSteps Steps of a reference solution; defaults to the profile's `stepBudget`.
 * @throws ConfigError when `referenceSteps` is not a finite number > 0.
 *
 * @example
 * ```ts
 * const scored = scoreTrajectoryRules(trajectory, getProfile('coding'));
 * console.log(scored.reward?.total, scored.steps[0]?.reward?.rubrics.redundancy);
 * ```
 */
export function scoreTrajectoryRules(t: Trajectory, profile: DomainProfile, referenceSteps?: number): Trajectory {
  const run = runRules(t, profile, { referenceSteps });
  return assemble(t, profile, run, [], undefined);
}

/**
 * Scores a trajectory with every configured layer: the rules; the LLM judge on the judge rubrics the
 * profile weights (skipped when none is weighted or no judge is given); the learned reward model (rubric
 * `learned`, when given); and the human calibration. Returns the trajectory with each step's `reward`
 * block (`layer` `rules`/`judge`/`learned` per rubric) and the `reward` summary (`layers.env`,
 * `layers.rules`, `layers.judge`, `layers.learned`, `layers.human`).
 *
 * @throws ConfigError for an invalid `referenceSteps` or a calibration that returns a non-finite number.
 *   Errors the judge throws propagate.
 */
export async function scoreTrajectory(t: Trajectory, options: ScoreOptions): Promise<Trajectory> {
  const { profile, judge, calibration } = options;
  const run = runRules(t, profile, { referenceSteps: options.referenceSteps });
  let extra: ScoredColumn[] = [];
  if (judge !== undefined) {
    const rubrics = weightedJudgeRubrics(profile);
    if (rubrics.length > 0 && t.steps.length > 0) {
      const judgements = await judge.judge(t, profile, rubrics);
      extra = judgeColumns(t.steps, judgements, rubrics, profile.rubricWeights);
    }
  }
  if (options.learned !== undefined && t.steps.length > 0) extra.push(await learnedColumn(t, options.learned));
  return assemble(t, profile, run, extra, calibration);
}
