import type { AgentEnv } from '../core/types.js';
import type { EpisodePlan } from './seeds.js';

/**
 * The episode scheduler `collect` and `evaluate` share: the episodes of a seeded plan (`planEpisodes`, seeds.ts)
 * run by `concurrency` workers, each owning one environment that it reuses across its episodes, with progress
 * after every episode. Which episode a worker takes next depends on timing, so results are placed by plan
 * position: a schedule gives the same results at any concurrency.
 */

/** Progress after an episode. */
export interface ScheduleProgress {
  /** Episodes finished. */
  done: number;
  /** Episodes planned. */
  total: number;
  elapsedMs: number;
  /** Episodes per second so far. */
  rate: number;
  /** Estimated time to finish, from the rate so far. */
  etaMs: number;
}

/** Options of {@link runSchedule}. */
export interface ScheduleOptions<R> {
  /** The episodes, in schedule order. */
  plans: readonly EpisodePlan[];
  /** Episodes in flight at once (a positive integer); each worker owns one environment. */
  concurrency: number;
  /** Makes a worker's environment: when it takes its first episode, and again after one is discarded. */
  makeEnv: () => AgentEnv;
  /**
   * Runs one episode on the worker's environment. A throw stops the schedule: no episode starts after it,
   * those in flight finish, and {@link runSchedule} rethrows the first error.
   */
  episode: (env: AgentEnv, plan: EpisodePlan) => Promise<R>;
  /**
   * Whether the environment must be replaced after this result: an episode that failed part-way leaves it in an
   * unknown state, so the worker closes it and makes a fresh one for its next episode. Default: never.
   */
  discardEnv?: (result: R) => boolean;
  /** Called after every finished episode, in completion order. */
  onProgress?: (progress: ScheduleProgress, result: R, plan: EpisodePlan) => void;
  /** Stops starting new episodes; those in flight finish. */
  signal?: AbortSignal;
  /**
   * Results an earlier run of the same schedule already has, by plan position: placed as they are, counted as
   * done, not run again (a retried collection resuming from its episode journal).
   */
  completed?: ReadonlyMap<number, R>;
}

/**
 * Runs a schedule (see {@link ScheduleOptions}) and returns the results by plan position; a position is
 * `undefined` when the signal stopped the run before its episode started.
 *
 * @example
 * ```ts
 * const plans = planEpisodes({ seed: 1, tasks, shuffle: true, n: 64 });
 * const results = await runSchedule({ plans, concurrency: 8, makeEnv: () => make(envId), episode: (env, plan) => runEpisode(env, agent, { task: plan.task?.id, seed: plan.seed }) });
 * ```
 */
export async function runSchedule<R>(options: ScheduleOptions<R>): Promise<(R | undefined)[]> {
  const { plans } = options;
  const results = new Array<R | undefined>(plans.length);
  for (const [position, result] of options.completed ?? []) if (position >= 0 && position < plans.length) results[position] = result;
  // The positions left to run, in plan order.
  const pending = plans.map((_, position) => position).filter((position) => !(options.completed?.has(position) ?? false));
  const started = Date.now();
  let next = 0;
  const resumed = plans.length - pending.length;
  let done = resumed;
  let failed = false;
  let failure: unknown;

  const worker = async (): Promise<void> => {
    let env: AgentEnv | undefined;
    try {
      while (!failed && next < pending.length && options.signal?.aborted !== true) {
        const position = pending[next++] as number;
        const plan = plans[position] as EpisodePlan;
        env ??= options.makeEnv();
        let result: R;
        try {
          result = await options.episode(env, plan);
        } catch (err) {
          if (!failed) failure = err;
          failed = true;
          break;
        }
        results[position] = result;
        done++;
        if (options.onProgress) {
          const elapsedMs = Date.now() - started;
          const rate = elapsedMs > 0 ? ((done - resumed) * 1000) / elapsedMs : 0;
          options.onProgress({ done, total: plans.length, elapsedMs, rate, etaMs: rate > 0 ? ((plans.length - done) / rate) * 1000 : 0 }, result, plan);
        }
        if (options.discardEnv?.(result) === true) {
          await env.close().catch(() => undefined);
          env = undefined;
        }
      }
    } finally {
      await env?.close();
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(options.concurrency, pending.length)) }, worker));
  if (failed) throw failure;
  return results;
}
