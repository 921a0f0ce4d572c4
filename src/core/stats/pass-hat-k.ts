import { bootstrapStatisticCi, type BootstrapOptions } from './bootstrap.js';
import { sum } from './descriptive.js';

/**
 * pass^k (τ-bench: Yao, Shinn, Razavi & Narasimhan 2024, "τ-bench: A Benchmark for Tool-Agent-User
 * Interaction in Real-World Domains", arXiv:2406.12045): the chance that **all** k independent trials of a
 * task succeed, averaged over tasks. It measures consistency, where pass@k (Chen et al. 2021) measures the
 * chance that at least one does.
 *
 * For a task run n ≥ k times with c successes, the unbiased estimate of P(k i.i.d. trials all succeed) is
 *
 *   C(c, k) / C(n, k) = ∏_{i=0}^{k−1} (c − i) / (n − i),
 *
 * the chance that k trials drawn without replacement from the n are all successes (it is 0 when c < k).
 * Unbiased: for c ~ Binomial(n, p), E[C(c, k) / C(n, k)] = p^k. pass^k is the mean of that estimate over
 * tasks; pass^1 is the mean of the per-task success rates (the success rate when every task ran equally often),
 * and pass^k never increases with k (each factor (c − i)/(n − i) ≤ 1).
 */

/** One task's trials: how many ran and how many of them succeeded. */
export interface TaskTrials {
  trials: number;
  successes: number;
}

/** pass^k at one k with its bootstrap percentile interval over tasks. */
export interface PassHatKPoint {
  k: number;
  /** The estimate on the tasks as they are. */
  value: number;
  low: number;
  high: number;
}

/**
 * The unbiased estimate C(c, k) / C(n, k) of the chance that k i.i.d. trials of one task all succeed, from
 * n trials with c successes (the product form, so large n cannot overflow).
 *
 * @example
 * ```ts
 * passHatK(4, 2, 2); // 1/6: C(2, 2) / C(4, 2)
 * passHatK(4, 1, 2); // 0: fewer successes than k
 * ```
 * @throws RangeError when k is not a positive integer, n not an integer ≥ k (the estimate needs at least k
 *   trials), or c not an integer in [0, n].
 */
export function passHatK(trials: number, successes: number, k: number): number {
  if (!Number.isInteger(k) || k < 1) throw new RangeError(`passHatK: k must be a positive integer, got ${k}`);
  if (!Number.isInteger(trials) || trials < k) {
    throw new RangeError(`passHatK: pass^${k} needs at least ${k} trials of the task, got ${trials}`);
  }
  if (!Number.isInteger(successes) || successes < 0 || successes > trials) {
    throw new RangeError(`passHatK: successes must be an integer in [0, ${trials}], got ${successes}`);
  }
  let p = 1;
  for (let i = 0; i < k; i++) p *= (successes - i) / (trials - i);
  return p;
}

/**
 * pass^k of a task set: the mean over tasks of {@link passHatK}. Every task must have run at least k times;
 * a task with fewer is an error rather than left out, because dropping it would weight the estimate towards
 * the tasks that ran more often.
 *
 * @throws RangeError when `tasks` is empty or a task is invalid (the message names its index).
 */
export function meanPassHatK(tasks: readonly TaskTrials[], k: number): number {
  return sum(perTask(tasks, k, 'meanPassHatK')) / tasks.length;
}

/**
 * pass^1 … pass^kMax of a task set, each with a percentile bootstrap interval that resamples **tasks** (the
 * unit whose trials are dependent). Every k uses the same seed, hence the same resampled task sets, so the
 * estimates and both bounds are non-increasing in k.
 *
 * @example
 * ```ts
 * passHatKCurve([{ trials: 4, successes: 2 }, { trials: 4, successes: 4 }], 2, { seed: 1 });
 * // [{ k: 1, value: 0.75, … }, { k: 2, value: 0.583…, … }]
 * ```
 * @throws RangeError when `tasks` is empty, kMax is not a positive integer, or a task ran fewer than kMax times.
 */
export function passHatKCurve(tasks: readonly TaskTrials[], kMax: number, options: BootstrapOptions = {}): PassHatKPoint[] {
  if (!Number.isInteger(kMax) || kMax < 1) throw new RangeError(`passHatKCurve: kMax must be a positive integer, got ${kMax}`);
  const points: PassHatKPoint[] = [];
  for (let k = 1; k <= kMax; k++) {
    const values = perTask(tasks, k, 'passHatKCurve');
    const ci = bootstrapStatisticCi(values.length, (idx) => sum(idx.map((i) => values[i] as number)) / idx.length, options);
    points.push({ k, value: ci.estimate, low: ci.low, high: ci.high });
  }
  return points;
}

function perTask(tasks: readonly TaskTrials[], k: number, what: string): number[] {
  if (tasks.length === 0) throw new RangeError(`${what}: no tasks; pass^${k} needs at least one`);
  return tasks.map((t, i) => {
    try {
      return passHatK(t.trials, t.successes, k);
    } catch (err) {
      throw new RangeError(`${what}: task ${i}: ${(err as Error).message.replace(/^passHatK: /, '')}`);
    }
  });
}
