import type { Trajectory } from '../core/trajectory.js';
import { preferenceScore } from './preferences.js';
import { mean } from '../core/stats/descriptive.js';
import { bootstrapInterval, wilsonInterval, type BootstrapInterval, type Interval } from './stats.js';
import { defined } from '../core/defined.js';

/**
 * A leaderboard of scored trajectories grouped by agent, model or task.
 *
 * - Score: `reward.total`, else `outcome.score` (the same score preferences use).
 * - Mean score interval: bootstrap percentile (trajectories of the group resampled with replacement,
 *   seeded). The seed of each group is the base seed mixed with a hash of the group key, so a row's
 *   interval does not change when other groups are added or the input is reordered.
 * - Success rate (`outcome.success`) interval: Wilson score interval — unlike the normal approximation it
 *   stays in [0, 1] and is honest at 0 % or 100 % and for small n.
 * - Rows are sorted by mean score (descending), then success rate (descending), then n (descending),
 *   then key (ascending).
 */

/** What rows group by: `agent` = agent name + model, `model` = model alone, `task` = domain + task id. */
export type LeaderboardGrouping = 'agent' | 'model' | 'task';

/** Options of {@link leaderboard}. */
export interface LeaderboardOptions {
  by: LeaderboardGrouping;
  /** Bootstrap resamples for the mean-score interval (default 1000). */
  resamples?: number;
  /** Base seed (default 0). */
  seed?: number;
  /** Confidence level of both intervals (default 0.95). */
  level?: number;
}

/** One leaderboard row. */
export interface LeaderboardRow {
  /** The group: `name` or `name (model)` for agents, the model (or `(none)`), or `domain/taskId`. */
  key: string;
  agent?: string;
  model?: string;
  task?: string;
  domain?: string;
  n: number;
  successes: number;
  /** Mean score with a bootstrap percentile interval. */
  meanScore: BootstrapInterval;
  /** Success rate with a Wilson interval. */
  successRate: Interval;
}

/**
 * Builds the leaderboard.
 *
 * @example
 * ```ts
 * for (const row of leaderboard(scored, { by: 'agent' })) {
 *   console.log(row.key, row.n, row.meanScore.estimate, row.meanScore.lo, row.meanScore.hi);
 * }
 * ```
 */
export function leaderboard(trajectories: Iterable<Trajectory>, options: LeaderboardOptions): LeaderboardRow[] {
  const level = options.level ?? 0.95;
  const groups = new Map<string, { fields: Omit<LeaderboardRow, 'key' | 'n' | 'successes' | 'meanScore' | 'successRate'>; scores: number[]; successes: number }>();
  for (const t of trajectories) {
    const { key, fields } = groupOf(t, options.by);
    let g = groups.get(key);
    if (!g) {
      g = { fields, scores: [], successes: 0 };
      groups.set(key, g);
    }
    g.scores.push(preferenceScore(t));
    if (t.outcome.success) g.successes++;
  }
  const rows: LeaderboardRow[] = [];
  for (const [key, g] of groups) {
    const scores = g.scores;
    rows.push({
      key,
      ...g.fields,
      n: scores.length,
      successes: g.successes,
      meanScore: bootstrapInterval(scores.length, (idx) => mean(idx.map((i) => scores[i] as number)), {
        resamples: options.resamples ?? 1000,
        seed: ((options.seed ?? 0) ^ fnv1a(key)) >>> 0,
        level,
      }),
      successRate: wilsonInterval(g.successes, scores.length, level),
    });
  }
  return rows.sort(
    (a, b) =>
      b.meanScore.estimate - a.meanScore.estimate ||
      b.successRate.estimate - a.successRate.estimate ||
      b.n - a.n ||
      (a.key < b.key ? -1 : a.key > b.key ? 1 : 0),
  );
}

function groupOf(t: Trajectory, by: LeaderboardGrouping): { key: string; fields: Pick<LeaderboardRow, 'agent' | 'model' | 'task' | 'domain'> } {
  switch (by) {
    case 'agent': {
      const model = t.agent.model;
      return { key: model !== undefined ? `${t.agent.name} (${model})` : t.agent.name, fields: { agent: t.agent.name, ...defined({ model }) } };
    }
    case 'model':
      return { key: t.agent.model ?? '(none)', fields: defined({ model: t.agent.model }) };
    case 'task':
      return { key: `${t.task.domain}/${t.task.id}`, fields: { task: t.task.id, domain: t.task.domain } };
  }
}

/** 32-bit FNV-1a of a string's UTF-16 code units: a stable per-group seed offset. */
function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}
