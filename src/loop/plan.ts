import { mixSeed } from '../core/rng.js';
import type { PipelineConfig, PipelinePhase } from './config.js';
import { bestOf, type IterationMetrics, type PolicyState } from './status.js';

/**
 * Pure decisions of the loop (workflows import this module): which phase an iteration belongs to, how the
 * groups of a collection are cut into shards, the seed of each, which agent spec acts for `policy`, and which
 * models `retention` lets go.
 */

/** Stream tag of the per-iteration collection seeds. */
const ITERATION_STREAM = 0x17e7;

/**
 * The phase that iteration `iteration` (1-based) belongs to, and its index. Iterations past the last
 * phase's end stay in the last phase.
 */
export function phaseOf(config: Pick<PipelineConfig, 'phases'>, iteration: number): { phase: PipelinePhase; index: number } {
  let end = 0;
  for (let i = 0; i < config.phases.length; i++) {
    const phase = config.phases[i] as PipelinePhase;
    end += phase.iterations ?? Number.POSITIVE_INFINITY;
    if (iteration <= end || i === config.phases.length - 1) return { phase, index: i };
  }
  throw new Error('pipeline configuration has no phases');
}

/**
 * A trainer configuration's `tensorboard_dir` when it is a non-empty string, else `undefined` (none, or a wrong
 * value: the trainer's own check names that).
 */
export function tensorboardDirIn(trainConfig: Readonly<Record<string, unknown>>): string | undefined {
  const dir = trainConfig['tensorboard_dir'];
  return typeof dir === 'string' && dir !== '' ? dir : undefined;
}

/** The TensorBoard directory of iteration `iteration`'s phase (the baseline's: the first phase's), if it sets one. */
export function tensorboardDirOf(config: Pick<PipelineConfig, 'phases'>, iteration: number): string | undefined {
  return tensorboardDirIn(phaseOf(config, iteration).phase.train.config);
}

/** The base seed of iteration `iteration`'s collection: a fresh task order and episode seeds every iteration. */
export function iterationSeed(seed: number, iteration: number): number {
  return mixSeed(seed, ITERATION_STREAM, iteration);
}

/** One shard: consecutive groups of the iteration's task order, collected by one activity. */
export interface ShardPlan {
  index: number;
  /** Task ids, one per group (a task may repeat when the iteration draws more groups than the split has). */
  tasks: string[];
  /** Seed of the shard's episode schedule. */
  seed: number;
}

/**
 * Cuts the task order of an iteration into shards of `shardSize` groups. Every shard gets its own seed, so
 * a task drawn twice (in two shards) is not replayed with the same episode seeds.
 */
export function planShards(taskOrder: readonly string[], shardSize: number, seed: number): ShardPlan[] {
  const shards: ShardPlan[] = [];
  for (let i = 0; i * shardSize < taskOrder.length; i++) {
    shards.push({ index: i, tasks: taskOrder.slice(i * shardSize, (i + 1) * shardSize), seed: mixSeed(seed, i) });
  }
  return shards;
}

/** Whether any phase collects with the loop's own policy. */
export function collectsWithPolicy(config: Pick<PipelineConfig, 'phases'>): boolean {
  return config.phases.some((p) => p.collect.agent === 'policy');
}

/**
 * Whether the evaluation stage acts with the loop's policy: the main evaluation without an agent, or a benchmark whose
 * agent (its own, else the eval section's) is none or `policy`.
 */
export function evaluatesPolicy(config: Pick<PipelineConfig, 'eval'>): boolean {
  const ev = config.eval;
  return ev.agent === undefined || (ev.benchmarks ?? []).some((b) => benchmarkUsesPolicy(config, b));
}

/** Whether a benchmark acts with the loop's policy (its agent, else the eval section's, is none or `policy`). */
export function benchmarkUsesPolicy(config: Pick<PipelineConfig, 'eval'>, b: Benchmark): boolean {
  const agent = b.agent ?? config.eval.agent;
  return agent === undefined || agent === 'policy';
}

/** Whether the loop ever acts with its policy (evaluation or collection). */
export function actsWithPolicy(config: Pick<PipelineConfig, 'phases' | 'eval'>): boolean {
  return evaluatesPolicy(config) || collectsWithPolicy(config);
}

/** One benchmark of `eval.benchmarks`. */
export type Benchmark = NonNullable<PipelineConfig['eval']['benchmarks']>[number];

/**
 * What `evaluatePolicy` runs for a benchmark: its environment, and the eval section's settings (temperature, token
 * limit, concurrency, seed, and the agent and step limit unless the benchmark names its own) with the benchmark's
 * split, tasks, trials and keyword arguments.
 */
export function benchmarkEval(config: Pick<PipelineConfig, 'eval'>, b: Benchmark): { envId: string; eval: PipelineConfig['eval'] } {
  const { benchmarks: _b, env_kwargs: _k, agent, max_steps, calibration_bins, tasks: _t, ...common } = config.eval;
  const section: PipelineConfig['eval'] = { ...common, split: b.split, repeats: b.repeats };
  const rest = {
    agent: b.agent ?? agent,
    max_steps: b.max_steps ?? max_steps,
    calibration_bins: b.calibration_bins ?? calibration_bins,
    tasks: b.tasks,
    env_kwargs: b.env_kwargs,
  };
  for (const [key, value] of Object.entries(rest)) if (value !== undefined) (section as Record<string, unknown>)[key] = value;
  return { envId: b.env, eval: section };
}

/** Whether checkpoints need an ONNX export: the loop acts with its policy and does not serve it (`policy.serve`). */
export function needsOnnxPolicy(config: Pick<PipelineConfig, 'phases' | 'eval' | 'policy'>): boolean {
  return config.policy.serve === undefined && actsWithPolicy(config);
}

/** A policy served for one stage (`policy.serve`): where the CPU workers reach it and under which name. */
export interface ServedPolicy {
  /** The model name the server lists and answers to: unique per iteration and checkpoint. */
  model: string;
  /** `http://HOST:PORT/v1`. */
  baseURL: string;
  /** Ask for the sampled token ids. */
  tokenIds: boolean;
  /** How long the server may take to serve the model (`policy.serve.startup_timeout`), e.g. `10m`. */
  startupTimeout: string;
}

/**
 * Where `policy` is served for a stage, or undefined when it is not: no `policy.serve`, or the policy is
 * still its stand-in agent (`policy.agent`, before the first training). The name carries the iteration and
 * the checkpoint's hash, so a server still up with another checkpoint on the same port is never mistaken
 * for this one.
 */
export function servedPolicy(config: Pick<PipelineConfig, 'name' | 'policy'>, policy: PolicyState): ServedPolicy | undefined {
  const serve = config.policy.serve;
  if (serve === undefined || policy.agent !== undefined) return undefined;
  const id = policy.checkpointRef !== undefined ? policy.checkpointRef.replace(/^sha256:/, '').slice(0, 12) : 'init';
  const host = serve.host.includes(':') ? `[${serve.host}]` : serve.host;
  return { model: `${config.name}-iter-${policy.iteration}-${id}`, baseURL: `http://${host}:${serve.port}/v1`, tokenIds: serve.token_ids, startupTimeout: serve.startup_timeout };
}

/**
 * The agent spec that acts for `spec` (a collect or eval agent): `policy` becomes the current policy —
 * its explicit stand-in agent, `openai:NAME@URL` when it is served, or `local:<dir>` of its ONNX export once
 * the activity has checked it out (`onnxDir`) — and any other spec is used as written.
 */
export function agentSpecFor(spec: string, policy: PolicyState, onnxDir: string | undefined, served?: Pick<ServedPolicy, 'model' | 'baseURL'>): string {
  if (spec !== 'policy') return spec;
  if (policy.onnxRef === undefined && policy.agent !== undefined) return policy.agent;
  if (served !== undefined) return `openai:${served.model}@${served.baseURL}`;
  if (onnxDir === undefined) throw new Error('the policy has no ONNX export to act with (policy.onnxRef is missing)');
  return `local:${onnxDir}`;
}

/** The workflow id `gymflow pipeline start` uses: `<name>-<yyyymmdd-hhmmss>` (UTC) unless `--id` is given. */
export function defaultWorkflowId(name: string, at: Date): string {
  const p = (n: number): string => String(n).padStart(2, '0');
  return `${name}-${at.getUTCFullYear()}${p(at.getUTCMonth() + 1)}${p(at.getUTCDate())}-${p(at.getUTCHours())}${p(at.getUTCMinutes())}${p(at.getUTCSeconds())}`;
}

/**
 * The checkpoint and policy refs `retention` lets go after the iterations in `history`: those of every
 * iteration but the `keep_last` most recent and, with `keep_best`, the one of best held-out success. A ref
 * that a kept iteration also names is never among them. Pruning is idempotent, so refs pruned after an
 * earlier iteration come again.
 */
export function refsToPrune(history: readonly IterationMetrics[], retention: NonNullable<PipelineConfig['retention']>): string[] {
  const byIteration = [...history].sort((a, b) => a.iteration - b.iteration);
  const kept = new Set(byIteration.slice(-retention.keep_last).map((h) => h.iteration));
  const best = retention.keep_best ? bestOf(byIteration) : undefined;
  if (best !== undefined) kept.add(best.iteration);
  const models = (h: IterationMetrics): string[] => [h.refs.checkpoint, h.refs.policy].filter((r): r is string => r !== undefined);
  const keep = new Set(byIteration.filter((h) => kept.has(h.iteration)).flatMap(models));
  return [...new Set(byIteration.filter((h) => !kept.has(h.iteration)).flatMap(models))].filter((r) => !keep.has(r));
}

/**
 * Whether asynchronous RL (`rl.async`) overlaps the collection of iteration `iteration + 1` with the training of
 * `iteration`: both train with `rl` and `iteration` is not the last. The first RL iteration after an SFT or DPO one
 * collects for itself: those trainings move the policy far, and no importance correction covers their gap.
 */
export function overlapsNextCollection(config: Pick<PipelineConfig, 'phases' | 'max_iterations' | 'rl'>, iteration: number): boolean {
  if (config.rl?.async === undefined || iteration < 1 || iteration >= config.max_iterations) return false;
  return phaseOf(config, iteration).phase.train.command === 'rl' && phaseOf(config, iteration + 1).phase.train.command === 'rl';
}

/**
 * The staleness rule of iteration `iteration`'s export (activities' `exportTrainingData`), when asynchronous RL is on
 * and the iteration trains with `rl`: the policy it starts from (`policy.iteration`) and the section's bound.
 */
export function stalenessRule(
  config: Pick<PipelineConfig, 'phases' | 'rl'>,
  iteration: number,
  policy: Pick<PolicyState, 'iteration'>,
): { policy_version: number; max_staleness: number; on_stale: 'drop' | 'fail'; field: string } | undefined {
  const a = config.rl?.async;
  if (a === undefined || phaseOf(config, iteration).phase.train.command !== 'rl') return undefined;
  return { policy_version: policy.iteration, max_staleness: a.max_staleness, on_stale: a.on_stale, field: '$.rl.async.max_staleness' };
}
