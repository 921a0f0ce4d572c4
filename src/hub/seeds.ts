import { ConfigError } from '../core/errors.js';
import { mixSeed, Rng } from '../core/rng.js';
import type { TaskInfo } from '../core/types.js';

/**
 * The deterministic episode schedule of `collect` and `evaluate` (docs/datasets.md, "Seed schedule"),
 * run by `runSchedule` (scheduler.ts).
 *
 * `n` groups of `G` episodes (G = `groupSize`, default 1). Group `k` (0 ≤ k < n) runs one task; its
 * member `g` (0 ≤ g < G) is episode `i = k·G + g`.
 *
 * - **Task order.** Tasks listed by the environment for the split are dealt in *epochs*: epoch
 *   `e = ⌊k / T⌋` (T = number of tasks) is the task list shuffled with `Rng(f(seed, TASK_STREAM, e))`,
 *   and group `k` runs task `k mod T` of its epoch's order. So `n ≤ T` visits distinct tasks, and every
 *   task is visited once per epoch. Explicit task ids are used in the order given (cycled the same way,
 *   not shuffled).
 * - **Episode seeds.** Member `g` of every group of epoch `e` gets seed `f(seed, EPISODE_STREAM, e·G + g)`:
 *   the g-th member of each group uses the same seed ("the same seed schedule across groups"), members
 *   of one group differ, and a task revisited in a later epoch gets fresh seeds instead of repeating
 *   its earlier group. The seed goes to `env.reset` and to the agent (`resolveAgent` and `agent.reset`).
 * - **Environments that cannot list tasks** pick the task from the reset seed, so each episode gets its
 *   own seed `f(seed, EPISODE_STREAM, i)` and `groupSize` must be 1 (members would see different tasks).
 *
 * `f` is {@link mixSeed}: a 32-bit avalanche hash, so neighbouring inputs give unrelated seeds. The
 * schedule depends only on (seed, tasks, n, G): not on concurrency or on which episode finishes
 * first, and a run with a smaller `n` is a prefix of one with a larger `n`.
 *
 * `evaluate` deals its tasks the same way, unshuffled and in groups of one (episode i runs task
 * `i mod T` of the split's list), but draws its seeds from the `'stream'` scheme: episode i gets the
 * i-th value of one `Rng(seed)` stream ({@link episodeSeeds}), so every episode has a seed of its own. With
 * `trials` R it runs n·R episodes: episode j = r·n + i (trial r) runs task `i mod T` with the j-th seed, so every
 * trial repeats the first's tasks with fresh seeds (episode j's task then depends on n as well).
 * Both schemes make episode i's (task, seed) a function of (seed, i), which is what lets two agents
 * evaluated with one seed be compared pair by pair. The two schemes stay apart because stored sets,
 * evaluation results and recorded histories were made with them.
 */

/** Stream tag of the task-order shuffles. */
export const TASK_STREAM = 0x7a5c;
/** Stream tag of the episode seeds. */
export const EPISODE_STREAM = 0x5eed;

/** One planned episode. */
export interface EpisodePlan {
  /** Position in the schedule: `group · groupSize + member`. */
  index: number;
  group: number;
  member: number;
  /** The task to reset with; `undefined` lets the environment pick it from the seed. */
  task: TaskInfo | undefined;
  seed: number;
}

/**
 * The seed of every episode of an evaluation (the `'stream'` scheme of {@link planEpisodes}): a stream of
 * 31-bit integers from `Rng(seed)`. Episode i's seed depends only on (seed, i) — not on n or the
 * concurrency — so two agents evaluated with the same seed see the same tasks with the same
 * environment seeds, and their results can be paired.
 */
export function episodeSeeds(seed: number, n: number): number[] {
  const rng = new Rng(seed);
  return Array.from({ length: n }, () => rng.nextUint32() >>> 1);
}

/**
 * How {@link planEpisodes} draws episode seeds: `'epoch'` (collect's, the default) gives member g of every
 * group of epoch e the seed `f(seed, EPISODE_STREAM, e·G + g)`; `'stream'` (evaluate's) gives episode i the
 * i-th value of {@link episodeSeeds}.
 */
export type SeedScheme = 'epoch' | 'stream';

/** Options of {@link planEpisodes}. */
export interface PlanOptions {
  seed: number;
  /** Number of groups (tasks drawn); default: one pass over the tasks. */
  n?: number;
  groupSize?: number;
  /** The tasks to deal; `undefined` when the environment cannot list them. */
  tasks: readonly TaskInfo[] | undefined;
  /** Shuffle the tasks per epoch (listed tasks) or keep their order (explicit tasks). */
  shuffle: boolean;
  /** How the episode seeds are drawn; default `'epoch'`. */
  seeds?: SeedScheme;
}

/** The schedule described in the module comment. */
export function planEpisodes(options: PlanOptions): EpisodePlan[] {
  const G = options.groupSize ?? 1;
  if (!Number.isInteger(G) || G < 1) throw new ConfigError(`groupSize must be a positive integer, got ${G}`);
  const tasks = options.tasks;
  if (tasks !== undefined && tasks.length === 0) throw new ConfigError('no tasks to run (the task list is empty)');
  const n = options.n ?? tasks?.length;
  if (n === undefined) throw new ConfigError('n is required when the environment cannot list its tasks');
  if (!Number.isInteger(n) || n < 0) throw new ConfigError(`n must be a non-negative integer, got ${n}`);
  if (tasks === undefined && G > 1) {
    throw new ConfigError(`groupSize ${G} needs task ids: the environment cannot list its tasks, so every seed would pick another task; pass tasks explicitly`);
  }
  const stream = options.seeds === 'stream' ? episodeSeeds(options.seed, n * G) : undefined;
  const plans: EpisodePlan[] = [];
  const orders = new Map<number, readonly TaskInfo[]>();
  const orderOf = (epoch: number): readonly TaskInfo[] => {
    let order = orders.get(epoch);
    if (!order) {
      const list = tasks as readonly TaskInfo[];
      order = options.shuffle ? new Rng(mixSeed(options.seed, TASK_STREAM, epoch)).shuffle(list) : list;
      orders.set(epoch, order);
    }
    return order;
  };
  for (let k = 0; k < n; k++) {
    if (tasks === undefined) {
      plans.push({ index: k, group: k, member: 0, task: undefined, seed: stream?.[k] ?? mixSeed(options.seed, EPISODE_STREAM, k) });
      continue;
    }
    const epoch = Math.floor(k / tasks.length);
    const task = orderOf(epoch)[k % tasks.length] as TaskInfo;
    for (let g = 0; g < G; g++) {
      const index = k * G + g;
      plans.push({ index, group: k, member: g, task, seed: stream?.[index] ?? mixSeed(options.seed, EPISODE_STREAM, epoch * G + g) });
    }
  }
  return plans;
}
