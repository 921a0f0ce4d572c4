import type { DomainProfile } from '../core/profiles/profile.js';
import type { Trajectory } from '../core/trajectory.js';

/**
 * The contracts between the reward layers: rules (deterministic, per step), an LLM judge on rubrics,
 * human calibration, and a learned reward model. `scoreTrajectory` composes them.
 */

/** One rubric's verdict on one step, in [0, 1]. */
export interface RubricResult {
  score: number;
  rationale?: string;
}

/** A layer's verdicts on one step, by rubric name. */
export interface StepJudgement {
  stepIndex: number;
  rubrics: Record<string, RubricResult>;
}

/** A rubric the judge scores: a built-in one (`goalProgress`, …) or one a profile defines as data. */
export interface RubricDefinition {
  name: string;
  description: string;
  scale?: Record<string, string>;
}

/** Tokens and money a judge spent. */
export interface JudgeUsage {
  requests: number;
  cacheHits: number;
  inputTokens: number;
  outputTokens: number;
  /** In US dollars, from the configured per-million-token prices; 0 when no prices are configured. */
  costUsd: number;
  failures: number;
}

/** The LLM-as-judge layer as the scorer sees it. */
export interface JudgeLayer {
  readonly name: string;
  judge(trajectory: Trajectory, profile: DomainProfile, rubrics: readonly RubricDefinition[]): Promise<StepJudgement[]>;
  usage(): JudgeUsage;
}

/** A fitted monotone map from automatic scores to the human scale (the calibration layer). */
export interface ScoreCalibration {
  readonly kind: string;
  /**
   * What the map was fitted on: trajectory totals (the default) or step scores. The scorer applies it to
   * the same quantity. When absent, `toJSON().fit.level` is consulted, then `'trajectory'` is assumed.
   */
  readonly level?: 'step' | 'trajectory';
  apply(score: number): number;
  toJSON(): Record<string, unknown>;
}

/** The learned reward model as the scorer sees it: one score in [0, 1] per step (`src/reward/learned/`). */
export interface LearnedScorer {
  readonly name: string;
  scoreSteps(trajectory: Trajectory): Promise<Float64Array>;
}

/** The learned layer of `scoreTrajectory`: a scorer and the weight of its rubric `learned`. */
export interface LearnedLayerOptions {
  scorer: LearnedScorer;
  /** The weight `w_learned` of the `learned` rubric, on the profile's weight scale (> 0). */
  weight: number;
}

/** Options of `scoreTrajectory`. */
export interface ScoreOptions {
  profile: DomainProfile;
  judge?: JudgeLayer;
  calibration?: ScoreCalibration;
  /** The learned reward model (optional): adds the step rubric `learned`, layer `learned`. */
  learned?: LearnedLayerOptions;
  /** Steps of a reference solution; without it the profile's `stepBudget` is the efficiency reference. */
  referenceSteps?: number;
}
