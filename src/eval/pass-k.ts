import { passHatKCurve, type TaskTrials } from '../core/stats/pass-hat-k.js';
import type { EpisodeRecord } from './metrics.js';
import type { PassKSummary } from './result.js';

/** One task's episodes in an evaluation: how many ran and how many succeeded. */
export interface TaskOutcomes extends TaskTrials {
  taskId: string;
}

/**
 * The episodes grouped by task, in the order the tasks first ran: each task's number of episodes (its trials)
 * and successes — the counts pass^k is estimated from.
 */
export function taskOutcomes(episodes: readonly EpisodeRecord[]): TaskOutcomes[] {
  const byTask = new Map<string, TaskOutcomes>();
  for (const e of [...episodes].sort((a, b) => a.index - b.index)) {
    const t = byTask.get(e.taskId) ?? { taskId: e.taskId, trials: 0, successes: 0 };
    t.trials += 1;
    if (e.success) t.successes += 1;
    byTask.set(e.taskId, t);
  }
  return [...byTask.values()];
}

/**
 * pass^1 … pass^kMax of an evaluation (τ-bench's pass^k; see src/core/stats/pass-hat-k.ts): per task
 * C(c, k) / C(n, k) from its n episodes with c successes, averaged over tasks, each with a percentile bootstrap
 * interval that resamples tasks. pass^1 is the mean of the tasks' success rates, which is the success rate when
 * every task ran equally often.
 *
 * @throws RangeError when there are no episodes, or a task ran fewer than kMax times (the message names it).
 */
export function summarizePassK(
  episodes: readonly EpisodeRecord[],
  kMax: number,
  options: { confidence: number; resamples: number; seed: number },
): PassKSummary[] {
  const tasks = taskOutcomes(episodes);
  const short = tasks.find((t) => t.trials < kMax);
  if (short) throw new RangeError(`pass^${kMax}: task ${short.taskId} ran ${short.trials} time(s); every task needs at least ${kMax}`);
  return passHatKCurve(tasks, kMax, options);
}
