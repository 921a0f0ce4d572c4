import type { Agent, AgentResolver } from '../core/agent.js';
import { ConfigError, GymflowError } from '../core/errors.js';
import { make } from '../core/registry.js';
import { Rng } from '../core/rng.js';
import { runEpisode } from '../core/rollout.js';
import type { Trajectory } from '../core/trajectory.js';
import type { AgentEnv, Split, TaskInfo } from '../core/types.js';
import { episodeRecord, type EpisodeRecord } from './metrics.js';
import { EVAL_RESULT_FORMAT, type EvalResult } from './result.js';
import { summarizeEpisodes } from './summarize.js';

/** Options of {@link evaluate}. */
export interface EvaluateOptions {
  /** A registered environment id. */
  envId: string;
  /** The agent spec (`expert`, `random`, …), recorded in the result and passed to `resolveAgent`. */
  agent: string;
  /** Builds a fresh agent for every episode. */
  resolveAgent: AgentResolver;
  /** Which tasks to run. Default `heldout`: evaluation never uses training tasks unless asked. */
  split?: Split;
  /** Number of episodes; task i is `tasks[i % tasks.length]`. */
  n: number;
  /** Seed of the episode seeds and the bootstrap. Default 0. */
  seed?: number;
  /** Episodes run at once, each worker with its own environment instance. Default 4. */
  concurrency?: number;
  /** Interval coverage. Default 0.95. */
  confidence?: number;
  /** Bootstrap resamples. Default 2000. */
  resamples?: number;
  /** Step limit per episode beyond the environment's own. */
  maxSteps?: number;
  /** Called after each episode (in completion order), e.g. to write trajectories or show progress. */
  onEpisode?: (episode: EpisodeRecord, trajectory: Trajectory) => void | Promise<void>;
}

/**
 * The seed of every episode of an evaluation: a stream of 31-bit integers from `Rng(seed)`. Episode
 * i's seed depends only on (seed, i) — not on n or the concurrency — so two agents evaluated with the
 * same seed see the same tasks with the same environment seeds, and their results can be paired.
 */
export function episodeSeeds(seed: number, n: number): number[] {
  const rng = new Rng(seed);
  return Array.from({ length: n }, () => rng.nextUint32() >>> 1);
}

/**
 * Evaluates an agent on an environment split: n seeded episodes over the split's tasks in order
 * (task i = tasks[i mod |tasks|]), run with bounded concurrency, measured per episode
 * ({@link EpisodeRecord}) and summarised with bootstrap intervals (success also Wilson).
 *
 * @example
 * ```ts
 * import { resolveAgent } from '../policy/specs.js';
 * const result = await evaluate({ envId: 'gymflow/tool-use-v0', agent: 'expert', resolveAgent, n: 50 });
 * console.log(toMarkdown(result));
 * ```
 * @throws ConfigError for bad options or a split without tasks; a wrapped error naming the episode,
 * task and seed when an episode fails.
 */
export async function evaluate(options: EvaluateOptions): Promise<EvalResult> {
  const split = options.split ?? 'heldout';
  const seed = options.seed ?? 0;
  const concurrency = options.concurrency ?? 4;
  const confidence = options.confidence ?? 0.95;
  const resamples = options.resamples ?? 2000;
  checkPositiveInteger(options.n, 'n');
  checkPositiveInteger(concurrency, 'concurrency');
  checkPositiveInteger(resamples, 'resamples');
  if (!Number.isInteger(seed)) throw new ConfigError(`evaluate: seed must be an integer, got ${seed}`);
  if (!(confidence > 0 && confidence < 1)) throw new ConfigError(`evaluate: confidence must be in (0, 1), got ${confidence}`);

  const probe = make(options.envId);
  let tasks: TaskInfo[];
  try {
    tasks = probe.listTasks?.(split) ?? [];
  } finally {
    await probe.close();
  }
  if (tasks.length === 0) {
    throw new ConfigError(`evaluate: ${options.envId} lists no '${split}' tasks; evaluation needs a fixed task list`);
  }

  const seeds = episodeSeeds(seed, options.n);
  // Resolve once up front so an unknown agent spec fails as itself, not as "episode 0 failed".
  await options.resolveAgent(options.agent, options.envId, { seed: seeds[0] as number }).close?.();
  const records: (EpisodeRecord | undefined)[] = new Array<EpisodeRecord | undefined>(options.n);
  let agentName = options.agent;
  let next = 0;
  let failure: unknown;

  const worker = async (): Promise<void> => {
    const env: AgentEnv = make(options.envId);
    try {
      while (failure === undefined && next < options.n) {
        const i = next++;
        const episodeSeed = seeds[i] as number;
        const task = tasks[i % tasks.length] as TaskInfo;
        let agent: Agent | undefined;
        try {
          agent = options.resolveAgent(options.agent, options.envId, { seed: episodeSeed });
          const trajectory = await runEpisode(env, agent, {
            envId: options.envId,
            seed: episodeSeed,
            task: task.id,
            ...(options.maxSteps === undefined ? {} : { maxSteps: options.maxSteps }),
          });
          const record = episodeRecord(trajectory, env.tools, i, episodeSeed);
          records[i] = record;
          agentName = trajectory.agent.name;
          await options.onEpisode?.(record, trajectory);
        } catch (err) {
          failure ??= new GymflowError(
            'EVAL_EPISODE_FAILED',
            `evaluate: episode ${i} of ${options.agent} on ${options.envId} (task ${task.id}, seed ${episodeSeed}) failed: ${err instanceof Error ? err.message : String(err)}`,
            { cause: err },
          );
        } finally {
          await agent?.close?.();
        }
      }
    } finally {
      await env.close();
    }
  };

  await Promise.all(Array.from({ length: Math.min(concurrency, options.n) }, () => worker()));
  if (failure !== undefined) throw failure;
  const episodes = records as EpisodeRecord[];
  return {
    format: EVAL_RESULT_FORMAT,
    envId: options.envId,
    agent: options.agent,
    agentName,
    split,
    n: options.n,
    seed,
    tasks: new Set(episodes.map((e) => e.taskId)).size,
    confidence,
    resamples,
    createdAt: new Date().toISOString(),
    // The bootstrap draws from its own stream, distinct from the episode-seed stream of the same seed.
    metrics: summarizeEpisodes(episodes, { confidence, resamples, seed: (seed ^ 0x5eed_b007) >>> 0 }),
    episodes,
  };
}

function checkPositiveInteger(v: number, name: string): void {
  if (!Number.isInteger(v) || v <= 0) throw new ConfigError(`evaluate: ${name} must be a positive integer, got ${v}`);
}
