import { writeJsonl } from './export/write.js';
import path from 'node:path';
import type { Agent, AgentResolver } from '../core/agent.js';
import { ConfigError, GymflowError } from '../core/errors.js';
import { checkNewOutput } from '../core/output-file.js';
import { RetriesExhaustedError } from '../core/retry.js';
import { make, spec } from '../core/registry.js';
import { runEpisode } from '../core/rollout.js';
import type { Trajectory } from '../core/trajectory.js';
import { makeTrajectory } from '../core/trajectory.js';
import type { AgentEnv, Split, TaskInfo } from '../core/types.js';
import { Recorder, type AgentInfo } from '../core/wrappers/recorder.js';
import { runSchedule, type ScheduleProgress } from './scheduler.js';
import { planEpisodes, type EpisodePlan } from './seeds.js';
import { isRef } from './store/layout.js';
import type { ArtifactStore } from './store/store.js';
import { putTrajectories, storedTrajectory, type StoredTrajectory } from './store/trajectory-set.js';
import { defined } from '../core/defined.js';

/**
 * `collect`: rollouts at scale. Runs many episodes of one agent in one environment with a bounded
 * pool of workers, records every trajectory, optionally scores it, and returns the set (in schedule
 * order, whatever order episodes finished in) plus a summary. See `seeds.ts` for the schedule and
 * `scheduler.ts` for how it runs.
 */

/** Options of {@link collect}. */
export interface CollectOptions {
  /** Registered environment id. */
  envId: string;
  /** Keyword arguments of every environment made (`make(envId, { kwargs })`), e.g. a conversation env's `user`. */
  envKwargs?: Record<string, unknown>;
  /** Agent spec for `resolveAgent` (`expert`, `random`, …). */
  agent: string;
  /**
   * Builds a fresh agent for every episode from `agent` and the episode's seed: `resolveAgent` of
   * `src/policy/specs.ts`, with the policy's options (sampling, a served model) bound by the caller.
   */
  resolveAgent: AgentResolver;
  /** Task ids to run, in this order (cycled when `n` is larger). Default: the split's tasks, shuffled by seed. */
  tasks?: readonly string[];
  /** Number of groups (tasks drawn). Episodes = n × groupSize. Default: one pass over the tasks. */
  n?: number;
  /** Which listed tasks to draw from (default `train`). */
  split?: Split;
  /** Episodes in flight at once; each worker owns one environment instance. Default 1. */
  concurrency?: number;
  /** Step limit of every episode (overrides the env spec's; truncates with reason `max_steps`). */
  maxSteps?: number;
  /** Base seed of the schedule (default 0). */
  seed?: number;
  /** Episodes per task (GRPO-style groups). Default 1. */
  groupSize?: number;
  /** Scores each trajectory (e.g. `(t) => scoreTrajectory(t, { profile })`). */
  rewardFn?: (t: Trajectory) => Promise<Trajectory>;
  /** Called after every finished episode. */
  onProgress?: (p: CollectProgress) => void;
  /** Stores the set (and a task-set artifact as its parent) here. */
  store?: ArtifactStore;
  /** Ref name for the stored set (a gc root). */
  name?: string;
  /**
   * The version of the policy that acts (a training loop's iteration whose checkpoint it is), recorded on every step
   * as `policyVersion`; absent for agents that are not a loop's policy.
   */
  policyVersion?: number;
  /** Extra parents of the stored set (e.g. the policy checkpoint's ref). */
  parents?: readonly string[];
  /** Also write the trajectories as JSONL to this file (atomically: temp file + rename). */
  out?: string;
  /**
   * Replace what `out` and `name` already hold (the CLI's `--force`). Without it, a non-empty `out` file and a
   * `name` that already names an artifact are refused before the first episode (core's `checkNewOutput`,
   * `ArtifactStore.checkNewName`): a collection may have cost hours or money.
   */
  force?: boolean;
  /** Stops starting new episodes; episodes in flight finish and are returned. */
  signal?: AbortSignal;
  /**
   * Episodes an earlier attempt of the same collection finished, by schedule position (an episode journal's
   * `finished`): they are not run again, and take their places in the set.
   */
  resume?: ReadonlyMap<number, Trajectory>;
  /**
   * Called with every finished episode (scored, if `rewardFn` is given) and its schedule position, and awaited
   * before its worker starts another episode: where an episode journal records it. An episode whose agent stayed
   * unreachable ({@link AGENT_UNREACHABLE}) is not passed: it says nothing about the policy and runs again.
   * `stored` gives the episode's stored form ({@link storedTrajectory}), made once: the set `store` gets reuses it, so
   * a journal that writes it serialises nothing the collection would not have serialised anyway.
   */
  onEpisode?: (index: number, trajectory: Trajectory, stored: () => StoredTrajectory) => Promise<void>;
}

/** Progress after an episode: the scheduler's, with the successes and failures so far. */
export interface CollectProgress extends ScheduleProgress {
  successes: number;
  failures: number;
}

/** Aggregate numbers of a collection. */
export interface CollectSummary {
  episodes: number;
  successes: number;
  successRate: number;
  /** Mean of `reward.total` when scored, else of the episode return (sum of env rewards). */
  meanReward: number;
  meanSteps: number;
  /** Token counts over all steps that carry token ids. */
  tokens: { prompt: number; completion: number };
  /**
   * Episodes that threw (recorded with reason `error`) and trajectories the reward function failed on, by
   * kind: a gymflow error's `code`, {@link AGENT_UNREACHABLE} for a model API that stayed unreachable through
   * its retries, else the error's class name.
   */
  failures: CollectFailures;
  /** Episodes a limit ended (`outcome.truncated`). */
  truncated: number;
  wallMs: number;
  episodesPerSecond: number;
  /** True when `signal` stopped the run early. */
  aborted: boolean;
}

/** The failures of a collection: how many, by kind, and the first message of each kind (what to show a user). */
export interface CollectFailures {
  total: number;
  byKind: Record<string, number>;
  /** The first failure's message of each kind, e.g. `CONFIG_ERROR: local:/m: model.onnx: Protobuf parsing failed`. */
  firstMessage?: Record<string, string>;
}

/** Result of {@link collect}. */
export interface CollectResult {
  /** Ref of the stored set, when a store was given. */
  ref?: string;
  /** Ref of the task-set artifact (the set's parent), when a store was given. */
  taskSetRef?: string;
  /** The JSONL file written, when `out` was given. */
  path?: string;
  /** Every trajectory, in schedule order. */
  trajectories: Trajectory[];
  summary: CollectSummary;
}

/**
 * Runs the episodes of the schedule with `concurrency` workers. Each worker makes one environment
 * (`make(envId)`) and reuses it across its episodes (replacing it after an episode that threw, whose
 * state is unknown), and closes it at the end. An episode that throws is recorded as a failed
 * trajectory — `outcome.reason: 'error'`, the steps recorded before the error, `metadata.error` —
 * and the others go on.
 *
 * @example
 * ```ts
 * const { summary, ref } = await collect({ envId: 'gymflow/tool-use-v0', agent: 'expert', n: 64, groupSize: 4, concurrency: 8, seed: 1, store });
 * ```
 */
export async function collect(options: CollectOptions): Promise<CollectResult> {
  const envSpec = spec(options.envId);
  const concurrency = options.concurrency ?? 1;
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new ConfigError(`concurrency must be a positive integer, got ${concurrency}`);
  if (options.maxSteps !== undefined && (!Number.isInteger(options.maxSteps) || options.maxSteps < 1)) {
    throw new ConfigError(`maxSteps must be a positive integer, got ${options.maxSteps}`);
  }
  const seed = options.seed ?? 0;
  const makeEnv = (): AgentEnv => make(options.envId, defined({ maxEpisodeSteps: options.maxSteps, kwargs: options.envKwargs }));

  // Where the set goes is checked before any episode runs (episodes may cost money): the file and the name,
  // neither replacing an earlier set unless forced, and the parents, resolved to refs like every other ref argument.
  const force = options.force === true;
  if (options.out !== undefined) await checkNewOutput(options.out, { force, stdout: true });
  if (options.store !== undefined && options.name !== undefined) await options.store.checkNewName(options.name, { force });
  // A full ref stays as given (a parent may live in another store); a name or a prefix must resolve here.
  const parents = options.store === undefined ? [] : await Promise.all((options.parents ?? []).map((p) => (isRef(p) ? p : (options.store as ArtifactStore).resolve(p))));

  // The task list, from the caller or the environment; the agent spec is checked before any episode.
  const probe = makeEnv();
  let tasks: TaskInfo[] | undefined;
  try {
    const listed = probe.listTasks?.(options.split ?? 'train');
    if (options.tasks !== undefined) {
      const all = new Map((probe.listTasks?.() ?? []).map((t) => [t.id, t]));
      // An environment that lists its tasks knows every id; one that lists none takes any.
      const unknown = all.size > 0 ? options.tasks.filter((id) => !all.has(id)) : [];
      if (unknown.length > 0) {
        const known = [...all.keys()];
        throw new ConfigError(`unknown task id${unknown.length > 1 ? 's' : ''} ${unknown.map((id) => `'${id}'`).join(', ')} for ${options.envId}; known: ${known.slice(0, 5).join(', ')}${known.length > 5 ? `, … (${known.length} in all)` : ''}`);
      }
      tasks = options.tasks.map((id) => all.get(id) ?? { id, domain: envSpec.domain, instruction: '' });
    } else if (listed !== undefined && listed.length > 0) {
      tasks = listed;
    }
    await closeAgent(options.resolveAgent(options.agent, options.envId, { seed }));
  } finally {
    await probe.close();
  }
  const plans = planEpisodes({
    seed,
    tasks,
    shuffle: options.tasks === undefined,
    groupSize: options.groupSize ?? 1,
    ...defined({ n: options.n }),
  });

  const byKind: Record<string, number> = {};
  const firstMessage: Record<string, string> = {};
  let successes = 0;
  let failures = 0;
  const started = Date.now();

  const fail = (kind: string, err: unknown): void => {
    byKind[kind] = (byKind[kind] ?? 0) + 1;
    firstMessage[kind] ??= err instanceof Error ? err.message : String(err);
    failures++;
  };

  // The stored form of each episode, made at most once (for the journal, then the set); the trajectories are not
  // changed once their episode returns.
  const storedForms = new WeakMap<Trajectory, StoredTrajectory>();
  const storedOnce = (t: Trajectory): StoredTrajectory => {
    let stored = storedForms.get(t);
    if (stored === undefined) {
      stored = storedTrajectory(t);
      storedForms.set(t, stored);
    }
    return stored;
  };

  // What an earlier attempt finished counts as it did then.
  const completed = new Map<number, { trajectory: Trajectory; failed: boolean }>();
  for (const [index, t] of options.resume ?? []) {
    if (index < 0 || index >= plans.length) continue;
    const error = t.metadata['error'] as { name?: string; code?: string; message?: string } | undefined;
    if (error !== undefined) fail(error.code ?? error.name ?? 'unknown', new Error(error.message ?? ''));
    if (t.outcome.success) successes++;
    completed.set(index, { trajectory: t, failed: error !== undefined });
  }

  const results = await runSchedule({
    plans,
    concurrency,
    makeEnv,
    completed,
    ...defined({ signal: options.signal }),
    // Never throws for an episode that failed: it becomes a failed trajectory and the others go on.
    episode: async (env, plan) => {
      const { trajectory, error } = await runPlanned(env, plan, options, envSpec.domain);
      let t = trajectory;
      const kind = error === undefined ? undefined : errorKind(error);
      if (kind !== undefined) {
        fail(kind, error);
      } else if (options.rewardFn) {
        try {
          t = await options.rewardFn(t);
        } catch (err) {
          fail('reward', err);
          t = { ...t, metadata: { ...t.metadata, rewardError: describeError(err) } };
        }
      }
      if (t.outcome.success) successes++;
      if (kind !== AGENT_UNREACHABLE && options.onEpisode !== undefined) {
        const episode = t;
        await options.onEpisode(plan.index, episode, () => storedOnce(episode));
      }
      return { trajectory: t, failed: error !== undefined };
    },
    // The env may be mid-episode or broken: start the next episode on a fresh one.
    discardEnv: (r) => r.failed,
    ...defined({ onProgress: options.onProgress === undefined ? undefined : (p: ScheduleProgress) => options.onProgress?.({ ...p, successes, failures }) }),
  });

  const trajectories = results.flatMap((r) => (r === undefined ? [] : [r.trajectory]));
  const wallMs = Date.now() - started;
  const summary = summarize(trajectories, { byKind, total: failures, firstMessage }, wallMs, options.signal?.aborted === true && trajectories.length < plans.length);
  const result: CollectResult = { trajectories, summary };

  if (options.store) {
    const taskSet = await options.store.putJson(
      { format: 'gymflow.task-set', envId: options.envId, split: options.split ?? 'train', tasks: distinctTasks(plans, trajectories) },
      { kind: 'task-set' },
    );
    const set = await putTrajectories(options.store, trajectories, {
      stored: (t) => storedForms.get(t),
      kind: options.rewardFn ? 'scored-trajectories' : 'trajectories',
      parents: [taskSet.ref, ...parents],
      meta: { envId: options.envId, agent: options.agent, seed, groupSize: options.groupSize ?? 1, summary: { ...summary } },
      ...defined({ name: options.name }),
    });
    result.ref = set.ref;
    result.taskSetRef = taskSet.ref;
  }
  if (options.out !== undefined) {
    // Not over a set another run wrote since the check (the same -o twice at once): both are kept then.
    await writeJsonl(options.out, trajectories, { replace: force });
    result.path = path.resolve(options.out);
  }
  return result;
}

/** One episode; never throws for an episode-level failure (it returns the failed trajectory). */
async function runPlanned(
  env: AgentEnv,
  plan: EpisodePlan,
  options: CollectOptions,
  domain: string,
): Promise<{ trajectory: Trajectory; error?: unknown }> {
  const metadata = { collect: { index: plan.index, group: plan.group, member: plan.member, seed: plan.seed, groupSize: options.groupSize ?? 1 } };
  let agentInfo: AgentInfo = { name: options.agent };
  // A recorder of our own below runEpisode's keeps the steps made before an exception.
  const recorder = new Recorder(env, { envId: options.envId, agent: agentInfo });
  let agent: Agent | undefined;
  try {
    agent = options.resolveAgent(options.agent, options.envId, { seed: plan.seed });
    agentInfo = agent.info;
    recorder.setAgent(agentInfo);
    const trajectory = await runEpisode(recorder, agent, {
      envId: options.envId,
      seed: plan.seed,
      metadata,
      ...defined({ task: plan.task?.id, maxSteps: options.maxSteps }),
    });
    return { trajectory: withPolicyVersion(trajectory, options.policyVersion) };
  } catch (error) {
    let partial: Trajectory | undefined;
    try {
      partial = recorder.getTrajectory();
    } catch {
      partial = undefined; // reset never succeeded
    }
    const task: Trajectory['task'] = partial?.task ?? plan.task ?? { id: 'unknown', domain, instruction: '' };
    const trajectory = makeTrajectory({
      task,
      envId: options.envId,
      agent: { ...agentInfo },
      steps: partial?.steps ?? [],
      outcome: { success: false, score: 0, terminated: false, truncated: false, reason: 'error' },
      metadata: { ...metadata, error: describeError(error) },
    });
    return { trajectory: withPolicyVersion(trajectory, options.policyVersion), error };
  } finally {
    if (agent) await closeAgent(agent);
  }
}

/** `t` with every step marked as chosen by policy version `version` (the id is unchanged: it does not hash it). */
export function withPolicyVersion(t: Trajectory, version: number | undefined): Trajectory {
  if (version === undefined) return t;
  return { ...t, steps: t.steps.map((s) => ({ ...s, policyVersion: version })) };
}

async function closeAgent(agent: Agent): Promise<void> {
  await agent.close?.();
}

/**
 * The failure kind of an episode whose agent's model API stayed unreachable (connection refused, timeouts,
 * 429/5xx) through all its retries: the episode says nothing about the policy. A training loop collects such a
 * shard again rather than train on it (`collectShard`).
 */
export const AGENT_UNREACHABLE = 'AGENT_UNREACHABLE';

/**
 * The failure type of a shard whose every episode the agent's model API refused without a retry (failure kinds
 * `AGENT_HTTP_4xx`: a bad key, an unknown model): `collectShard` fails for good, since no retry changes that.
 */
export const AGENT_REFUSED = 'AGENT_REFUSED';

/** The failure bucket of an error: its gymflow `code`, {@link AGENT_UNREACHABLE}, else its class name. */
function errorKind(err: unknown): string {
  if (err instanceof GymflowError) return err.code;
  if (err instanceof RetriesExhaustedError) {
    // Not retried: the API refused the request (a bad key, an unknown model), which no later episode escapes.
    if (!err.failure.retryable) return err.failure.status !== undefined ? `AGENT_HTTP_${err.failure.status}` : 'AGENT_ERROR';
    return AGENT_UNREACHABLE;
  }
  if (err instanceof Error) return err.name;
  return 'unknown';
}

function describeError(err: unknown): Record<string, unknown> {
  if (err instanceof Error) {
    const out: Record<string, unknown> = { name: err.name, message: err.message };
    if (err instanceof GymflowError) out.code = err.code;
    return out;
  }
  return { name: 'unknown', message: String(err) };
}

/** The summary numbers of a set of trajectories (exported for reports over stored sets). */
export function summarize(trajectories: readonly Trajectory[], failures: CollectFailures, wallMs: number, aborted = false): CollectSummary {
  let successes = 0;
  let reward = 0;
  let steps = 0;
  let truncated = 0;
  const tokens = { prompt: 0, completion: 0 };
  for (const t of trajectories) {
    if (t.outcome.success) successes++;
    if (t.outcome.truncated) truncated++;
    reward += t.reward?.total ?? t.steps.reduce((a, s) => a + (s.envReward ?? 0), 0);
    steps += t.steps.length;
    for (const s of t.steps) {
      tokens.prompt += s.tokens?.prompt?.length ?? 0;
      tokens.completion += s.tokens?.completion?.length ?? 0;
    }
  }
  const n = trajectories.length;
  return {
    episodes: n,
    successes,
    successRate: n ? successes / n : 0,
    meanReward: n ? reward / n : 0,
    meanSteps: n ? steps / n : 0,
    tokens,
    failures: { total: failures.total, byKind: { ...failures.byKind }, ...(failures.firstMessage && Object.keys(failures.firstMessage).length > 0 ? { firstMessage: { ...failures.firstMessage } } : {}) },
    truncated,
    wallMs,
    episodesPerSecond: wallMs > 0 ? (n * 1000) / wallMs : 0,
    aborted,
  };
}

function distinctTasks(plans: readonly EpisodePlan[], trajectories: readonly Trajectory[]): Trajectory['task'][] {
  const out = new Map<string, Trajectory['task']>();
  for (const p of plans) if (p.task && !out.has(p.task.id)) out.set(p.task.id, p.task);
  if (out.size === 0) for (const t of trajectories) if (!out.has(t.task.id)) out.set(t.task.id, t.task);
  return [...out.values()];
}

