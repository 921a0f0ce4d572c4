import type { Trajectory } from '../core/trajectory.js';
import type { ToolSpec } from '../core/types.js';
import { defined } from '../core/defined.js';

/**
 * The per-episode measurements of an evaluation and how they are read off a trajectory. Every metric
 * is a number per episode; an evaluation summarises each with its mean and a bootstrap interval, and
 * `compare` tests differences in one of them.
 */

/** The metrics of an evaluation, in report order. */
export const EVAL_METRICS = ['success', 'score', 'reward', 'steps', 'toolCalls', 'invalidActions', 'tokens', 'costUsd'] as const;

/** One of {@link EVAL_METRICS}. */
export type MetricName = (typeof EVAL_METRICS)[number];

/** What a metric means and which direction is better. */
export interface MetricInfo {
  /** Higher is better (success, reward); otherwise lower is better (steps, cost). */
  higherIsBetter: boolean;
  description: string;
}

/** Direction and meaning of every metric. */
export const METRIC_INFO: Readonly<Record<MetricName, MetricInfo>> = {
  success: { higherIsBetter: true, description: 'outcome.success as 0/1; its mean is the success rate' },
  score: { higherIsBetter: true, description: "outcome.score in [0, 1] (the environment's graded outcome)" },
  reward: { higherIsBetter: true, description: 'sum of the per-step envReward over the episode (the return)' },
  steps: { higherIsBetter: false, description: 'number of steps (actions) in the episode' },
  toolCalls: {
    higherIsBetter: false,
    description: "steps calling one of the environment's tools other than the submit/think ones (valid or not)",
  },
  invalidActions: { higherIsBetter: false, description: 'steps with an error (unknown tool, bad params, tool failure)' },
  tokens: { higherIsBetter: false, description: 'prompt + completion token ids recorded over the episode (only when recorded)' },
  costUsd: { higherIsBetter: false, description: 'trajectory metadata costUsd (0 when absent)' },
};

/** Tool categories that do not count as tool calls: ending the episode and thinking aloud. */
const NON_CALL_CATEGORIES = new Set<string>(['submit', 'think']);

/** One evaluated episode: where it ran and what it measured. */
export interface EpisodeRecord {
  /** Position in the evaluation, 0-based. */
  index: number;
  taskId: string;
  /** The seed the environment and agent were reset with. */
  seed: number;
  /** Content id of the trajectory (`sha256:…`). */
  trajectoryId: string;
  success: boolean;
  score: number;
  reward: number;
  steps: number;
  toolCalls: number;
  invalidActions: number;
  /** Token ids recorded over the episode; null when no step recorded any. */
  tokens: number | null;
  costUsd: number;
  /** `outcome.reason` (`submitted`, `max_steps`, …). */
  reason: string;
  truncated: boolean;
  /** Sum of the steps' durations (env + agent time), milliseconds. */
  durationMs: number;
  /** The confidence the agent stated in its answer (`outcome.confidence`, 0–1), when the environment read one. */
  confidence?: number;
}

/**
 * Measures one trajectory. `tools` are the environment's tools (their categories decide what counts as
 * a tool call); `index` and `seed` say where the episode sat in the evaluation.
 */
export function episodeRecord(trajectory: Trajectory, tools: readonly ToolSpec[], index: number, seed: number): EpisodeRecord {
  const categories = new Map(tools.map((t) => [t.name, t.category] as const));
  let reward = 0;
  let toolCalls = 0;
  let invalidActions = 0;
  let tokens = 0;
  let anyTokens = false;
  let durationMs = 0;
  for (const s of trajectory.steps) {
    reward += s.envReward ?? 0;
    const category = categories.get(s.action.tool);
    if (category !== undefined && !NON_CALL_CATEGORIES.has(category)) toolCalls += 1;
    if (s.error) invalidActions += 1;
    if (s.tokens) {
      anyTokens = true;
      tokens += (s.tokens.prompt?.length ?? 0) + (s.tokens.completion?.length ?? 0);
    }
    durationMs += s.durationMs;
  }
  const cost = trajectory.metadata.costUsd;
  return {
    index,
    taskId: trajectory.task.id,
    seed,
    trajectoryId: trajectory.id,
    success: trajectory.outcome.success,
    score: trajectory.outcome.score,
    // Rounded to 12 places so that sums of small penalties (0.05 + 0.05 + …) print as written.
    reward: Number(reward.toFixed(12)),
    steps: trajectory.steps.length,
    toolCalls,
    invalidActions,
    tokens: anyTokens ? tokens : null,
    costUsd: typeof cost === 'number' && Number.isFinite(cost) ? cost : 0,
    reason: trajectory.outcome.reason,
    truncated: trajectory.outcome.truncated,
    durationMs,
    ...defined({ confidence: trajectory.outcome.confidence }),
  };
}

/** The value of `metric` for one episode; null when the episode did not record it (tokens). */
export function metricValue(episode: EpisodeRecord, metric: MetricName): number | null {
  switch (metric) {
    case 'success':
      return episode.success ? 1 : 0;
    case 'tokens':
      return episode.tokens;
    default:
      return episode[metric];
  }
}
