import type { Agent, AgentResolver } from '../core/agent.js';
import { ConfigError, GymflowError } from '../core/errors.js';
import { make } from '../core/registry.js';
import { runEpisode } from '../core/rollout.js';
import type { Trajectory } from '../core/trajectory.js';
import type { Split, TaskInfo } from '../core/types.js';
import { runSchedule } from '../hub/scheduler.js';
import { planEpisodes, type EpisodePlan } from '../hub/seeds.js';
import { episodeRecord, type EpisodeRecord } from './metrics.js';
import { EVAL_RESULT_FORMAT, type CalibrationSummary, type EvalResult } from './result.js';
import { rmsCalibrationError } from '../core/stats/calibration-error.js';
import { summarizeEpisodes } from './summarize.js';
import { summarizePassK } from './pass-k.js';
import { mixSeed } from '../core/rng.js';
import { defined } from '../core/defined.js';

/** Stream tag of the pass^k bootstrap (`mixSeed(bootstrap seed, PASS_K_STREAM)`). */
const PASS_K_STREAM = 0x9a55;

/** Options of {@link evaluate}. */
export interface EvaluateOptions {
  /** A registered environment id. */
  envId: string;
  /** Keyword arguments of every environment made (`make(envId, { kwargs })`), recorded in the result. */
  envKwargs?: Record<string, unknown>;
  /** The agent spec (`expert`, `random`, …), recorded in the result and passed to `resolveAgent`. */
  agent: string;
  /** Builds a fresh agent for every episode. */
  resolveAgent: AgentResolver;
  /** Which tasks to run. Default `heldout`: evaluation never uses training tasks unless asked. */
  split?: Split;
  /** Number of episodes of one trial; its episode i runs task `tasks[i % tasks.length]`. */
  n: number;
  /**
   * How many times to run those n episodes' tasks (τ-bench's trials): `n · trials` episodes, each with a seed of
   * its own, and pass^1 … pass^trials in the result. Default 1.
   */
  trials?: number;
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
  /** Answers per bin of the calibration error, when the episodes state confidences. Default 100, HLE's. */
  calibrationBinSize?: number;
  /** Called after each episode (in completion order), e.g. to write trajectories or show progress. */
  onEpisode?: (episode: EpisodeRecord, trajectory: Trajectory) => void | Promise<void>;
  /**
   * Episodes an earlier attempt of the same evaluation finished, by episode index (an episode journal's
   * `finished`): not run again, measured from their trajectories.
   */
  resume?: ReadonlyMap<number, Trajectory>;
  /** Stops starting episodes (those running finish); the evaluation then fails with a `CANCELLED` error. */
  signal?: AbortSignal;
}

/**
 * Evaluates an agent on an environment split: n seeded episodes over the split's tasks in order
 * (task i = tasks[i mod |tasks|], seed i = `episodeSeeds(seed, n)[i]`: the `'stream'` scheme of
 * `planEpisodes` in src/hub/seeds.ts), run with bounded concurrency by the scheduler `collect` uses too, measured per episode
 * ({@link EpisodeRecord}) and summarised with bootstrap intervals (success also Wilson).
 *
 * With `trials` T > 1 the n episodes' tasks run T times: episode j = t·n + i (trial t, 0 ≤ i < n) runs task
 * tasks[i mod |tasks|] with seed `episodeSeeds(seed, n·T)[j]`, so trial 0 is the run without trials, every
 * episode has its own seed, and the result adds pass^1 … pass^T (`passK`, {@link summarizePassK}).
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
  const trials = options.trials ?? 1;
  checkPositiveInteger(options.n, 'n');
  checkPositiveInteger(trials, 'trials');
  checkPositiveInteger(concurrency, 'concurrency');
  checkPositiveInteger(resamples, 'resamples');
  if (!Number.isInteger(seed)) throw new ConfigError(`evaluate: seed must be an integer, got ${seed}`);
  if (!(confidence > 0 && confidence < 1)) throw new ConfigError(`evaluate: confidence must be in (0, 1), got ${confidence}`);

  const calibrationBinSize = options.calibrationBinSize ?? 100;
  checkPositiveInteger(calibrationBinSize, 'calibrationBinSize');

  const probe = make(options.envId, defined({ kwargs: options.envKwargs }));
  let tasks: TaskInfo[];
  let notes: string[];
  try {
    tasks = probe.listTasks?.(split) ?? [];
    notes = probe.notes?.() ?? [];
  } finally {
    await probe.close();
  }
  if (tasks.length === 0) {
    throw new ConfigError(`evaluate: ${options.envId} lists no '${split}' tasks; evaluation needs a fixed task list`);
  }

  // Episode j runs task (j mod n) mod |tasks| in the split's order, with the j-th seed of the seed's stream: one
  // trial deals the n tasks, and each later trial deals them again with fresh seeds. With one trial this is
  // episode i → task i mod |tasks|, as results stored before trials existed were made.
  const trialTasks = Array.from({ length: options.n }, (_, i) => tasks[i % tasks.length] as TaskInfo);
  const plans = planEpisodes({ seed, tasks: trialTasks, n: options.n * trials, shuffle: false, seeds: 'stream' });
  // Resolve once up front so an unknown agent spec fails as itself, not as "episode 0 failed".
  await options.resolveAgent(options.agent, options.envId, { seed: (plans[0] as EpisodePlan).seed }).close?.();
  let agentName = options.agent;

  // What an earlier attempt finished, measured as then (the tools name each call's category).
  const completed = new Map<number, EpisodeRecord>();
  if (options.resume !== undefined && options.resume.size > 0) {
    const probe = make(options.envId, defined({ kwargs: options.envKwargs }));
    const tools = probe.tools;
    await probe.close();
    for (const [index, trajectory] of options.resume) {
      const plan = plans[index];
      if (plan === undefined) continue;
      completed.set(index, episodeRecord(trajectory, tools, plan.index, plan.seed));
      agentName = trajectory.agent.name;
    }
  }

  // The first episode that fails stops the evaluation (a result with a hole in it would not pair with another).
  const records = await runSchedule({
    plans,
    concurrency,
    completed,
    makeEnv: () => make(options.envId, defined({ kwargs: options.envKwargs })),
    episode: async (env, plan) => {
      const task = plan.task as TaskInfo;
      let agent: Agent | undefined;
      try {
        agent = options.resolveAgent(options.agent, options.envId, { seed: plan.seed });
        const trajectory = await runEpisode(env, agent, {
          envId: options.envId,
          seed: plan.seed,
          task: task.id,
          ...defined({ maxSteps: options.maxSteps }),
        });
        const record = episodeRecord(trajectory, env.tools, plan.index, plan.seed);
        agentName = trajectory.agent.name;
        await options.onEpisode?.(record, trajectory);
        return record;
      } catch (err) {
        throw new GymflowError(
          'EVAL_EPISODE_FAILED',
          `evaluate: episode ${plan.index} of ${options.agent} on ${options.envId} (task ${task.id}, seed ${plan.seed}) failed: ${err instanceof Error ? err.message : String(err)}`,
          { cause: err },
        );
      } finally {
        await agent?.close?.();
      }
    },
    ...defined({ signal: options.signal }),
  });
  if (options.signal?.aborted === true) {
    throw new GymflowError('CANCELLED', `evaluate: cancelled after ${records.filter((r) => r !== undefined).length} of ${plans.length} episodes of ${options.agent} on ${options.envId}`);
  }
  const episodes = records as EpisodeRecord[];
  // The bootstrap draws from its own stream, distinct from the episode-seed stream of the same seed.
  const bootstrapSeed = (seed ^ 0x5eed_b007) >>> 0;
  return {
    format: EVAL_RESULT_FORMAT,
    envId: options.envId,
    ...defined({ envKwargs: options.envKwargs }),
    agent: options.agent,
    agentName,
    split,
    n: episodes.length,
    ...(trials > 1 ? { trials } : {}),
    seed,
    tasks: new Set(episodes.map((e) => e.taskId)).size,
    confidence,
    resamples,
    createdAt: new Date().toISOString(),
    metrics: summarizeEpisodes(episodes, { confidence, resamples, seed: bootstrapSeed }),
    // pass^k resamples tasks with a stream of its own, so the metrics' intervals stay as they were without trials.
    ...(trials > 1 ? { passK: summarizePassK(episodes, trials, { confidence, resamples, seed: mixSeed(bootstrapSeed, PASS_K_STREAM) }) } : {}),
    ...defined({ calibration: summarizeCalibration(episodes, calibrationBinSize) }),
    ...(notes.length > 0 ? { notes } : {}),
    episodes,
  };
}

/**
 * The calibration error of the episodes that stated a confidence (HLE leaves a response without a judged confidence
 * out of it, and counts it as wrong in the accuracy); undefined when none did.
 */
export function summarizeCalibration(episodes: readonly EpisodeRecord[], binSize = 100): CalibrationSummary | undefined {
  const stated = episodes.flatMap((e) => (e.confidence === undefined ? [] : [{ confidence: e.confidence, correct: e.success }]));
  if (stated.length === 0) return undefined;
  const c = rmsCalibrationError(stated, { binSize });
  return { n: c.n, rmsError: c.rms, binSize: c.binSize, bins: c.bins };
}

function checkPositiveInteger(v: number, name: string): void {
  if (!Number.isInteger(v) || v <= 0) throw new ConfigError(`evaluate: ${name} must be a positive integer, got ${v}`);
}
