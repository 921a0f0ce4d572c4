/**
 * Forking a `trainingLoop` run (`gymflow pipeline fork ID --from-iteration K [CONFIG]`): a new loop, under a new
 * workflow id, that starts where iteration K of the old run left off — the policy K trained (its checkpoint and
 * ONNX export), the metrics history up to K — and goes on with iteration K+1, perhaps under another configuration.
 * The old run is not touched: the fork only reads its artifacts, and its own artifacts get names of their own
 * (the experiment is renamed, `<name>-fork<K>` unless told otherwise).
 *
 * When only the reward changed (the collection of iteration K+1 would be the one iteration K ran: same environment,
 * same `collect` section), the fork's first iteration does not collect: it scores iteration K's stored rollouts
 * with the new reward (`LoopState.reuseRollouts`), and trains the policy of iteration K on them. `rescore` forces
 * or forbids that. Every later iteration collects as usual.
 *
 * Pure (workflow-safe) like the rest of src/loop: the CLI gathers the old run's configuration and history.
 */
import { ConfigError } from '../core/errors.js';
import type { PipelineConfig } from './config.js';
import { needsOnnxPolicy, phaseOf } from './plan.js';
import type { IterationMetrics, LoopState } from './status.js';
import { defined } from '../core/defined.js';

/** What a fork reads of the old run. */
export interface ForkSource {
  workflowId: string;
  /** The workflow type: only a `trainingLoop` forks. */
  type: string;
  /** The configuration of the old run's latest execution. */
  config: PipelineConfig;
  /** Every iteration of the old run known (its status's or result's history, the latest execution's state). */
  history: readonly IterationMetrics[];
}

/** Options of {@link forkRun}. */
export interface ForkOptions {
  /** The old run's iteration to start from (its policy; its rollouts when rescoring). */
  iteration: number;
  /** Another configuration for the fork (validated), and the file it came from (for messages). */
  config?: PipelineConfig;
  configFile?: string;
  /** The fork's experiment name (default: the new configuration's when it differs, else `<old name>-fork<K>`). */
  name?: string;
  /** Rescore iteration K's rollouts instead of collecting (true), or collect (false); default: when only the reward changed. */
  rescore?: boolean;
  maxIterations?: number;
  /** The fork's start (its `loopStartedAt`). */
  now: Date;
}

/** How to start the fork, and lines that say what it does. */
export interface Fork {
  config: PipelineConfig;
  state: LoopState;
  /** Whether the first iteration rescores the old rollouts instead of collecting. */
  rescore: boolean;
  summary: string;
}

/** Whether two configuration values are equal, whatever the order of their keys (no Node built-ins here). */
function same(a: unknown, b: unknown): boolean {
  if (a === b || (a === undefined && b === null) || (a === null && b === undefined)) return true;
  if (Array.isArray(a) || Array.isArray(b)) return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => same(x, b[i]));
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  const ka = Object.keys(a).filter((k) => (a as Record<string, unknown>)[k] !== undefined);
  const kb = Object.keys(b).filter((k) => (b as Record<string, unknown>)[k] !== undefined);
  return ka.length === kb.length && ka.every((k) => same((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

/**
 * The fork of `source` at `options.iteration` (see the module comment).
 *
 * @throws ConfigError when the run is not a training loop, the iteration is not in its history or has no
 *   checkpoint, the new configuration uses another store, needs an ONNX policy iteration K did not export, has no
 *   iteration left, or a forced rescore has no rollouts of the same environment to score.
 */
export function forkRun(source: ForkSource, options: ForkOptions): Fork {
  const id = `workflow '${source.workflowId}'`;
  const k = options.iteration;
  const file = options.configFile ?? 'configuration';
  if (source.type !== 'trainingLoop') throw new ConfigError(`${id} is a ${source.type} run: only a trainingLoop forks`);
  const entry = source.history.find((h) => h.iteration === k);
  if (entry === undefined) {
    const known = source.history.map((h) => h.iteration);
    throw new ConfigError(`--from-iteration ${k}: ${id} has no finished iteration ${k} (its history holds ${known.length === 0 ? 'none yet' : known.join(', ')})`);
  }
  const checkpoint = entry.refs.checkpoint;
  if (checkpoint === undefined) throw new ConfigError(`--from-iteration ${k}: iteration ${k} of ${id} stored no checkpoint (an external policy.init.path): fork from a training iteration`);

  let config = options.config ?? source.config;
  if (config.store !== source.config.store) {
    throw new ConfigError(`${file} $.store: ${JSON.stringify(config.store ?? null)} differs from the forked run's ${JSON.stringify(source.config.store ?? null)}: a fork reads the old run's artifacts from its store`);
  }
  const name = options.name ?? (config.name !== source.config.name ? config.name : `${source.config.name}-fork${k}`);
  config = { ...config, name };
  if (options.maxIterations !== undefined) config = { ...config, max_iterations: options.maxIterations };
  if (k + 1 > config.max_iterations) {
    throw new ConfigError(`the fork starts at iteration ${k + 1}, past max_iterations ${config.max_iterations}: raise it (--max-iterations ${k + 1} or more, or in the configuration)`);
  }
  const onnx = entry.refs.policy;
  if (needsOnnxPolicy(config) && onnx === undefined) {
    throw new ConfigError(`${file}: the fork acts with the policy through its ONNX export, which iteration ${k} of ${id} did not make (its configuration served the policy or acted with another agent)`);
  }

  const rollouts = entry.refs.rollouts ?? entry.refs.scored;
  const oldCollect = phaseOf(source.config, k).phase.collect;
  const newCollect = phaseOf(config, k + 1).phase.collect;
  const sameEnv = config.env === source.config.env && (newCollect.env ?? config.env) === (oldCollect.env ?? source.config.env);
  const sameCollection = sameEnv && same(config.env_kwargs, source.config.env_kwargs) && same(newCollect, oldCollect);
  const rewardChanged = !same(config.reward, source.config.reward);
  let rescore: boolean;
  if (options.rescore === true) {
    if (rollouts === undefined) throw new ConfigError(`--rescore: iteration ${k} of ${id} has no stored rollouts`);
    if (!sameEnv) throw new ConfigError(`--rescore: the fork collects from ${newCollect.env ?? config.env}, iteration ${k}'s rollouts come from ${oldCollect.env ?? source.config.env}`);
    rescore = true;
  } else {
    rescore = options.rescore === undefined && rollouts !== undefined && rewardChanged && sameCollection;
  }

  const state: LoopState = {
    iteration: k + 1,
    policy: { checkpointRef: checkpoint, ...defined({ onnxRef: onnx }), iteration: k },
    history: source.history.filter((h) => h.iteration <= k),
    paused: false,
    runs: 0,
    loopStartedAt: options.now.toISOString(),
    // The fork checks its configuration before its first activity, as a continuation does.
    setupDone: false,
    forkedFrom: { workflowId: source.workflowId, iteration: k },
    ...(rescore && rollouts !== undefined ? { reuseRollouts: { ref: rollouts, ...defined({ tasks: entry.refs.tasks }) } } : {}),
  };
  const why = rescore
    ? `iteration ${k + 1} rescores iteration ${k}'s rollouts with ${rewardChanged ? 'the new' : 'the'} reward instead of collecting`
    : `iteration ${k + 1} collects afresh${options.rescore === false ? ' (--no-rescore)' : rollouts === undefined ? ` (iteration ${k} has no stored rollouts)` : !rewardChanged ? ' (the reward is unchanged)' : ' (the collection differs from iteration ' + k + "'s)"}`;
  return { config, state, rescore, summary: `experiment ${name} from the policy of iteration ${k}; ${why}` };
}
