import { z } from 'zod';
import { SchemaError } from '../core/errors.js';
import { formatZodIssues } from '../core/trajectory.js';
import { EVAL_METRICS, type EpisodeRecord, type MetricName } from './metrics.js';

/**
 * The evaluation result: a JSON-serialisable record of one agent on one environment split — the
 * per-episode measurements and their summaries. `gymflow eval --out` writes it, `gymflow compare` and
 * the artifact store read it back through {@link parseEvalResult}.
 */

/** The format tag of {@link EvalResult} files. */
export const EVAL_RESULT_FORMAT = 'gymflow.eval/v1';

/** A confidence interval as stored in results. */
export interface Interval {
  low: number;
  high: number;
}

/** Summary of one metric over the episodes that recorded it. */
export interface MetricSummary {
  /** Episodes with a value (all of them, except for `tokens`). */
  n: number;
  /** Mean over those episodes; null when n = 0. */
  mean: number | null;
  /** Sample standard deviation (n − 1); null when n < 2. */
  sd: number | null;
  /** Bootstrap percentile interval of the mean; null when n = 0. */
  ci: Interval | null;
}

/** The success-rate summary: the metric summary plus the count and a Wilson score interval. */
export interface SuccessSummary extends MetricSummary {
  successes: number;
  /** Wilson score interval of the success rate (better than the bootstrap at 0/n and n/n). */
  wilson: Interval | null;
}

/**
 * pass^k at one k (τ-bench's consistency metric: the chance that all k independent trials of a task succeed,
 * averaged over tasks; `passHatKCurve` in src/core/stats/pass-hat-k.ts) with its bootstrap percentile interval,
 * which resamples tasks.
 */
export interface PassKSummary {
  k: number;
  value: number;
  low: number;
  high: number;
}

/**
 * The calibration of the confidences the agent stated (Humanity's Last Exam's calibration error): the binned RMS
 * calibration error (`rmsCalibrationError`, src/core/stats/calibration-error.ts) over the episodes that stated one,
 * sorted by confidence into bins of `binSize`.
 */
export interface CalibrationSummary {
  /** Episodes with a stated confidence. */
  n: number;
  /** The RMS calibration error, in [0, 1] (HLE reports it ×100). */
  rmsError: number;
  binSize: number;
  /** Per bin, lowest confidence first: answers, mean stated confidence, share correct. */
  bins: { n: number; confidence: number; accuracy: number }[];
}

/** Every metric's summary. */
export type MetricSummaries = Record<Exclude<MetricName, 'success'>, MetricSummary> & { success: SuccessSummary };

/** One agent evaluated on one environment split. */
export interface EvalResult {
  format: typeof EVAL_RESULT_FORMAT;
  envId: string;
  /** The environment's keyword arguments, when the evaluation gave any (`evaluate`'s `envKwargs`). */
  envKwargs?: Record<string, unknown>;
  /** The agent spec as given (`expert`, `random`, `openai:MODEL`). */
  agent: string;
  /** The agent's own name, from its trajectories. */
  agentName: string;
  split: 'train' | 'heldout';
  /** Number of episodes, every trial's together. */
  n: number;
  /**
   * Trials: how many times the run went over its tasks, each episode with a seed of its own (`evaluate`'s
   * `trials`). Present when more than 1; absent means 1 (and results written before trials existed).
   */
  trials?: number;
  /** Seed from which every episode seed and the bootstrap seeds derive. */
  seed: number;
  /** Number of distinct tasks the episodes covered. */
  tasks: number;
  /** Coverage of every interval. */
  confidence: number;
  /** Bootstrap resamples B behind every `ci`. */
  resamples: number;
  /** ISO time the evaluation finished. */
  createdAt: string;
  metrics: MetricSummaries;
  /** pass^1 … pass^trials, present with `trials`. */
  passK?: PassKSummary[];
  /** The calibration of the stated confidences, present when some episode stated one (a question-answering env). */
  calibration?: CalibrationSummary;
  /** What the environment said of its tasks (`AgentEnv.notes`: questions left out, and why), when it said something. */
  notes?: string[];
  episodes: EpisodeRecord[];
}

const finite = z.number().refine(Number.isFinite, { message: 'expected a finite number' });
const interval = z.object({ low: finite, high: finite }).strict();
const summary = z.object({ n: z.number().int().nonnegative(), mean: finite.nullable(), sd: finite.nullable(), ci: interval.nullable() }).strict();
const passKSummary = z.object({ k: z.number().int().positive(), value: finite, low: finite, high: finite }).strict();
const successSummary = summary.extend({ successes: z.number().int().nonnegative(), wilson: interval.nullable() }).strict();

const episodeSchema = z
  .object({
    index: z.number().int().nonnegative(),
    taskId: z.string().min(1),
    seed: z.number().int(),
    trajectoryId: z.string(),
    success: z.boolean(),
    score: finite,
    reward: finite,
    steps: z.number().int().nonnegative(),
    toolCalls: z.number().int().nonnegative(),
    invalidActions: z.number().int().nonnegative(),
    tokens: z.number().int().nonnegative().nullable(),
    costUsd: finite,
    reason: z.string(),
    truncated: z.boolean(),
    durationMs: z.number().nonnegative(),
    confidence: z.number().min(0).max(1).optional(),
  })
  .strict();

const calibrationSummary = z
  .object({
    n: z.number().int().positive(),
    rmsError: z.number().min(0).max(1),
    binSize: z.number().int().positive(),
    bins: z.array(z.object({ n: z.number().int().positive(), confidence: finite, accuracy: finite }).strict()).min(1),
  })
  .strict();

const metricsShape = Object.fromEntries(EVAL_METRICS.map((m) => [m, m === 'success' ? successSummary : summary])) as Record<
  MetricName,
  typeof summary
>;

/** The zod schema of {@link EvalResult} files. */
export const EvalResultSchema = z
  .object({
    format: z.literal(EVAL_RESULT_FORMAT),
    envId: z.string().min(1),
    envKwargs: z.record(z.string(), z.unknown()).optional(),
    agent: z.string().min(1),
    agentName: z.string(),
    split: z.enum(['train', 'heldout']),
    n: z.number().int().positive(),
    // Optional: results written before trials existed have neither field.
    trials: z.number().int().positive().optional(),
    seed: z.number().int(),
    tasks: z.number().int().nonnegative(),
    confidence: z.number().gt(0).lt(1),
    resamples: z.number().int().positive(),
    createdAt: z.string(),
    metrics: z.object({ ...metricsShape, success: successSummary }).strict(),
    passK: z.array(passKSummary).min(1).optional(),
    // Optional: results of environments without stated confidences, or notes, have none.
    calibration: calibrationSummary.optional(),
    notes: z.array(z.string()).min(1).optional(),
    episodes: z.array(episodeSchema).min(1),
  })
  .strict()
  .refine((r) => r.episodes.length === r.n, { message: 'episodes.length differs from n', path: ['episodes'] })
  .refine((r) => r.passK === undefined || (r.passK.length === r.trials && r.passK.every((p, i) => p.k === i + 1)), {
    message: 'expected pass^1 … pass^trials, in order (and trials beside passK)',
    path: ['passK'],
  });

/**
 * Validates an evaluation result read from a file or the store. `place` names where it came from
 * (`runs/expert.json`) and prefixes every problem.
 *
 * @throws SchemaError listing every problem as `place $.path: message`.
 */
export function parseEvalResult(value: unknown, place: string): EvalResult {
  const parsed = EvalResultSchema.safeParse(value);
  if (!parsed.success) {
    const issues = formatZodIssues(parsed.error, place);
    throw new SchemaError(issues.join('\n'), issues);
  }
  return parsed.data as EvalResult;
}
