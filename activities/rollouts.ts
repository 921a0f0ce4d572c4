/**
 * CPU activities of a pass, each a thin layer over the library: validate the input (zod), call `src/`,
 * heartbeat progress, store the result and return refs plus a compact summary.
 *
 * - `planTasks` (Task stage): the iteration's task order (`planEpisodes` over the split), stored as a
 *   `task-set` artifact;
 * - `collectShard` (Sandbox + Recorder): `collect` on a shard of groups, the recorded set stored;
 * - `scoreRollouts` (Reward): every shard's trajectories scored with the domain profile's rules (and the judge's
 *   recorded verdicts, the calibration and the learned model when `reward` sets them: activities/reward.ts), stored
 *   as one `scored-trajectories` set whose parents are the shards (and the judgements) and whose index entry's
 *   `meta.reward` records the layers, models and files that scored it;
 * - `exportTrainingData` (Export): `exportDataset` to the trainer's format, stored as a `dataset`;
 * - `evaluatePolicy` (Eval): `evaluate` on the eval split, the result stored as an `eval` artifact.
 */
import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { z } from 'zod';
import { registryToolLookup } from '../src/core/chat/tool-lookup.js';
import { make } from '../src/core/registry.js';
import type { Trajectory } from '../src/core/trajectory.js';
import { evaluate } from '../src/eval/evaluate.js';
import type { PassKSummary } from '../src/eval/result.js';
import { AGENT_REFUSED, AGENT_UNREACHABLE, collect, summarize } from '../src/hub/collect.js';
import { resolvePairs } from '../src/hub/export/dpo.js';
import { exportDataset } from '../src/hub/export/export.js';
import { splitByStaleness } from '../src/hub/export/staleness.js';
import { planEpisodes } from '../src/hub/seeds.js';
import { EpisodeJournal } from '../src/hub/store/journal.js';
import { isErrno } from '../src/core/fs.js';
import { LABEL_ACTIVITY, LABEL_ATTEMPT, LABEL_RUN, LABEL_WORKFLOW, removeScopeSandboxes, runInSandboxScope, type ScopeLabels } from '../src/sandbox/scope.js';
import { loadTrajectories, putTrajectories } from '../src/hub/store/trajectory-set.js';
import { durationMs } from '../src/core/duration.js';
import type { AgentResolver } from '../src/core/agent.js';
import { CollectSectionSchema, EvalSectionSchema, ExportSectionSchema, RewardSectionSchema, rulesEnabled } from '../src/loop/config.js';
import { agentSpecFor, type ServedPolicy } from '../src/loop/plan.js';
import type { PolicyState } from '../src/loop/status.js';
import { waitForModel } from '../src/runtime/serve.js';
import { checkoutCached, openWorkspace, type Workspace, type WorkspaceDefaults } from '../src/runtime/workspace.js';
import { resolveAgent, type ResolveAgentOptions } from '../src/policy/specs.js';
import { buildPreferences } from '../src/reward/preferences.js';
import { scoreWithRewardSection } from './score-set.js';
import { configFailure, keepAlive, parseInput, progressReporter, throwIfCancelled, withFailureMapping } from './common.js';
import { PolicySchema, sectionFromFields, ServedPolicySchema, storeRef as ref } from './schemas.js';
import { defined } from '../src/core/defined.js';

const Where = { store: z.string().optional(), workDir: z.string().optional() };

/** Compact numbers of a set of rollouts (what the workflow keeps). */
export interface RolloutSummary {
  episodes: number;
  successes: number;
  successRate: number;
  meanReward: number;
  meanSteps: number;
  failures: number;
  wallMs: number;
}

function compact(s: ReturnType<typeof summarize>): RolloutSummary {
  return { episodes: s.episodes, successes: s.successes, successRate: s.successRate, meanReward: s.meanReward, meanSteps: s.meanSteps, failures: s.failures.total, wallMs: s.wallMs };
}

/** The agent spec that acts for `agent`: the served policy, or its ONNX export checked out when needed. */
async function actingAgent(ws: Workspace, agent: string, policy: PolicyState, served: ServedPolicy | undefined): Promise<string> {
  const onnxDir = agent === 'policy' && served === undefined && policy.onnxRef !== undefined ? await checkoutCached(ws, policy.onnxRef) : undefined;
  return agentSpecFor(agent, policy, onnxDir, served);
}

/**
 * Before a served policy acts, waits until its server lists it (up to its startup timeout), heartbeating: an
 * attempt retried after the server died waits for the restarted one instead of failing every episode. A
 * server that does not come back fails the attempt, retryably.
 */
async function awaitServed(agent: string, served: ServedPolicy | undefined): Promise<void> {
  if (agent !== 'policy' || served === undefined) return;
  const ctx = Context.current();
  try {
    await waitForModel(served.baseURL, served.model, { timeoutMs: durationMs(served.startupTimeout), signal: ctx.cancellationSignal, onPoll: () => ctx.heartbeat() });
  } catch (err) {
    throwIfCancelled();
    throw ApplicationFailure.retryable((err as Error).message, 'SERVER_NOT_READY');
  }
}

/**
 * Sampling options of the policy: for `local:` and, when the policy is served, for `openai:` (no API key:
 * the loop's own server; token ids asked for as `policy.serve.token_ids` says). Other agents ignore them.
 */
function policyOptions(temperature: number, maxNewTokens: number | undefined, served: ServedPolicy | undefined): Omit<ResolveAgentOptions, 'seed'> {
  const local = { local: { temperature, ...defined({ maxNewTokens }) } };
  if (served === undefined) return local;
  return { ...local, openai: { apiKey: 'EMPTY', temperature, returnTokenIds: served.tokenIds, ...defined({ maxTokens: maxNewTokens }) } };
}

/** `resolveAgent` with the policy's options bound (the episode's seed is the resolver's). */
function policyResolver(options: Omit<ResolveAgentOptions, 'seed'>): AgentResolver {
  return (agentSpec, envId, o) => resolveAgent(agentSpec, envId, { ...options, ...o });
}


/**
 * Rollout stages report after every episode or trajectory, which can take well under a millisecond (the
 * expert agent, rule scoring): heartbeats at most every 100 ms keep the SDK's per-call cost out of that
 * loop (their details are progress only; the server sees one heartbeat per several seconds either way),
 * and a shard shorter than 2 s sends no progress signal, which would cost the workflow a task per shard.
 */
const ROLLOUT_PROGRESS = { heartbeatIntervalMs: 100, firstSignalAfterMs: 2_000 } as const;

/**
 * The episode journal of the running activity (docs/store.md, "Journals"), keyed by its workflow, run and activity
 * id: the same on every attempt, so a retry after a crash (`kill -9` of the worker) finds the episodes the dead
 * attempt had finished and runs only the rest.
 */
async function activityJournal(ws: Workspace): Promise<EpisodeJournal> {
  const { workflowId, runId, activityId } = activityIds();
  return EpisodeJournal.open(ws.store.root, `${workflowId}/${runId}/${activityId}`);
}

/** The running activity's workflow, run and activity id: the same on every attempt. */
function activityIds(): { workflowId: string; runId: string; activityId: string } {
  const info = Context.current().info;
  const execution = info.workflowExecution ?? { workflowId: 'standalone', runId: info.activityId };
  return { workflowId: execution.workflowId, runId: execution.runId, activityId: info.activityId };
}

/**
 * Runs `work` in a sandbox scope (src/sandbox/scope.ts) labelled with the activity's workflow, run, activity id and
 * attempt: every container its environments make carries them, and its warm pool ends with it. A retry first removes
 * what its predecessor left (a worker killed mid-shard leaves its containers running); without a Docker engine
 * there is nothing to remove. Heartbeats `details()` throughout (`keepAlive`), the end of the scope included: a
 * cancelled activity is waited for until it reports the cancellation, and that comes only once its sandboxes are
 * removed, which must not be taken for a lost worker.
 */
async function inSandboxScope<T>(details: () => unknown, work: () => Promise<T>): Promise<T> {
  const stopKeepAlive = keepAlive(details);
  try {
    const { workflowId, runId, activityId } = activityIds();
    const owner: ScopeLabels = { [LABEL_WORKFLOW]: workflowId, [LABEL_RUN]: runId, [LABEL_ACTIVITY]: activityId };
    const attempt = Context.current().info.attempt;
    if (attempt > 1) {
      await removeScopeSandboxes(owner).catch((err: unknown) => {
        if (!isErrno(err, 'ENOENT') && !isErrno(err, 'ECONNREFUSED')) throw err;
      });
    }
    return await runInSandboxScope({ ...owner, [LABEL_ATTEMPT]: String(attempt) }, work);
  } finally {
    stopKeepAlive();
  }
}

/**
 * Runs `work` with the activity's journal: removed once `work` returned (its result is stored) or failed for good
 * (cancelled, or an error no retry changes); kept, closed, when a retry will follow.
 */
async function withJournal<T>(ws: Workspace, work: (journal: EpisodeJournal) => Promise<T>): Promise<T> {
  const journal = await activityJournal(ws);
  try {
    const result = await work(journal);
    await journal.remove();
    return result;
  } catch (err) {
    const final = Context.current().cancellationSignal.aborted || (err instanceof ApplicationFailure && err.nonRetryable);
    await (final ? journal.remove() : journal.close());
    throw err;
  }
}

/** The input of `planTasks` (parsed at run time; typed for the workflows that call it). */
export const PlanTasksInputSchema = z.object({
  envId: z.string(),
  /** The environment's keyword arguments (the collect section's `env_kwargs`). */
  envKwargs: z.record(z.string(), z.unknown()).optional(),
  split: z.enum(['train', 'heldout']),
  groups: z.number().int().positive(),
  seed: z.number().int(),
  ...Where,
});

/**
 * The input of `collectShard` (parsed at run time; typed for the workflows that call it): the configuration's
 * `collect` section as it is, with one shard's plan beside it (its task ids and seed, which the section's `tasks`
 * count and the loop's seed were cut into) and what the workflow adds (the environment, the policy, the endpoint
 * serving it, the task plan it came from).
 */
export const CollectShardInputSchema = z.object({
  envId: z.string(),
  policy: PolicySchema,
  collect: CollectSectionSchema,
  tasks: z.array(z.string()).min(1),
  seed: z.number().int(),
  served: ServedPolicySchema.optional(),
  parents: z.array(ref),
  ...Where,
});

/**
 * `collectShard`'s input in the shape workflows scheduled it before the `collect` section passed through as it is
 * (`{ envId, agent, policy, tasks, groupSize, seed, concurrency, maxSteps?, temperature, maxNewTokens?, … }`),
 * rewritten as the current one ({@link sectionFromFields}); the section's other fields take their defaults.
 */
export const collectShardInputFromFields = sectionFromFields('collect', {
  agent: 'agent',
  groupSize: 'group_size',
  concurrency: 'concurrency',
  maxSteps: 'max_steps',
  temperature: 'temperature',
  maxNewTokens: 'max_new_tokens',
});

/** {@link CollectShardInputSchema}, also reading the earlier shape ({@link collectShardInputFromFields}). */
export const AcceptedCollectShardInputSchema = z.preprocess(collectShardInputFromFields, CollectShardInputSchema);

/**
 * The input of `scoreRollouts` (typed for the workflows that call it): the configuration's `reward` section as it
 * is, with the environment, the shards to score and the set's name.
 */
export const ScoreRolloutsInputSchema = z.object({
  envId: z.string(),
  shards: z.array(ref).min(1),
  reward: RewardSectionSchema,
  /** The verdicts of `judgeRollouts` (the `judgements` artifact), when `reward.judge` is set. */
  judgements: ref.optional(),
  name: z.string().optional(),
  /** Recorded in the set's metadata beside what the stage records (a forked run's first set: `forkedFrom`). */
  meta: z.record(z.string(), z.unknown()).optional(),
  ...Where,
});

/**
 * `scoreRollouts`' input in the shape workflows scheduled it before the `reward` section passed through as it is
 * (`{ envId, shards, enabled, profile?, concurrency, name?, … }`), rewritten as the current one ({@link sectionFromFields}).
 */
export const scoreRolloutsInputFromFields = sectionFromFields('reward', { enabled: 'enabled', profile: 'profile', concurrency: 'concurrency' });

/** What `scoreRollouts` parses: the current input, or the old one ({@link scoreRolloutsInputFromFields}). */
export const AcceptedScoreRolloutsInputSchema = z.preprocess(scoreRolloutsInputFromFields, ScoreRolloutsInputSchema);

/** What `exportTrainingData` returns: the dataset, its record count, trajectories kept and read, and the staleness check. */
export interface ExportTrainingDataResult {
  ref: string;
  records: number;
  kept: number;
  input: number;
  /** With a staleness bound: the largest staleness seen and how many trajectories were dropped past it. */
  staleness?: { maxSeen: number; dropped: number };
}

/**
 * Applies asynchronous RL's staleness bound to a batch (src/hub/export/staleness.ts): returns the trajectories to
 * export and what was found; with `on_stale: fail`, a stale trajectory fails the activity for good (`STALE_BATCH`),
 * naming the field, the versions and the bound.
 */
export function applyStaleness(
  ts: Trajectory[],
  rule: { policy_version: number; max_staleness: number; on_stale: 'drop' | 'fail'; field: string } | undefined,
): { trajectories: Trajectory[]; stale?: { maxSeen: number; dropped: number } } {
  if (rule === undefined) return { trajectories: ts };
  const split = splitByStaleness(ts, { policyVersion: rule.policy_version, maxStaleness: rule.max_staleness });
  if (split.stale.length > 0 && rule.on_stale === 'fail') {
    throw ApplicationFailure.nonRetryable(
      `${rule.field}: ${split.stale.length} of ${ts.length} trajectories were acted by a policy older than version ${rule.policy_version - rule.max_staleness} ` +
        `(the oldest: version ${split.oldestStale}, ${split.maxSeen} versions behind the policy this training updates, version ${rule.policy_version}), ` +
        `past max_staleness ${rule.max_staleness}; the batch is refused (on_stale: fail; on_stale: drop leaves them out)`,
      'STALE_BATCH',
    );
  }
  return { trajectories: split.fresh, stale: { maxSeen: split.maxSeen, dropped: split.stale.length } };
}

/**
 * The input of `exportTrainingData` (typed for the workflows that call it): the phase's `export` section as it
 * is (its `format` resolved from the train command), with the scored set, the section's field path for error
 * messages, the dataset's name and the iteration's seed.
 */
export const ExportTrainingDataInputSchema = z.object({
  setRef: ref,
  export: ExportSectionSchema.required({ format: true }),
  field: z.string(),
  name: z.string().optional(),
  seed: z.number().int(),
  /**
   * Asynchronous RL's bound (`rl.async`): the policy version the training starts from, `max_staleness` and `on_stale`
   * of the section at `field` (for the message). Absent: every trajectory is kept, whatever produced it.
   */
  staleness: z
    .object({ policy_version: z.number().int().nonnegative(), max_staleness: z.number().int().nonnegative(), on_stale: z.enum(['drop', 'fail']), field: z.string() })
    .optional(),
  ...Where,
});

/**
 * `exportTrainingData`'s input in the shape workflows scheduled it before the `export` section passed through as
 * it is (`{ setRef, format, successOnly, minReward?, maxSteps?, top?, dedup, minMargin, maxPairsPerTask?, … }`),
 * rewritten as the current one ({@link sectionFromFields}).
 */
export const exportTrainingDataInputFromFields = sectionFromFields('export', {
  format: 'format',
  successOnly: 'success_only',
  minReward: 'min_reward',
  maxSteps: 'max_steps',
  top: 'top',
  dedup: 'dedup',
  minMargin: 'min_margin',
  maxPairsPerTask: 'max_pairs_per_task',
});

/** What `exportTrainingData` parses: the current input, or the old one ({@link exportTrainingDataInputFromFields}). */
export const AcceptedExportTrainingDataInputSchema = z.preprocess(exportTrainingDataInputFromFields, ExportTrainingDataInputSchema);

/**
 * The input of `evaluatePolicy` (typed for the workflows that call it): the configuration's `eval` section as
 * it is, with what the workflow adds (the environment, the policy, the endpoint serving it, the set's name).
 */
export const EvaluatePolicyInputSchema = z.object({
  envId: z.string(),
  policy: PolicySchema,
  eval: EvalSectionSchema,
  served: ServedPolicySchema.optional(),
  name: z.string().optional(),
  ...Where,
});

/**
 * `evaluatePolicy`'s input in the shape workflows scheduled it before the `eval` section passed through as it is
 * (`{ envId, agent, split, tasks?, repeats, seed, concurrency, maxSteps?, temperature, maxNewTokens?, policy, … }`),
 * rewritten as the current one ({@link sectionFromFields}).
 */
export const evaluatePolicyInputFromFields = sectionFromFields('eval', {
  agent: 'agent',
  split: 'split',
  tasks: 'tasks',
  repeats: 'repeats',
  seed: 'seed',
  concurrency: 'concurrency',
  maxSteps: 'max_steps',
  temperature: 'temperature',
  maxNewTokens: 'max_new_tokens',
});

/** What `evaluatePolicy` parses: the current input, or the old one ({@link evaluatePolicyInputFromFields}). */
export const AcceptedEvaluatePolicyInputSchema = z.preprocess(evaluatePolicyInputFromFields, EvaluatePolicyInputSchema);

/** Rollout activities; `defaults` are the worker's store and work directory. */
export function createRolloutActivities(defaults: WorkspaceDefaults) {
  return {
    /** The iteration's task order: `groups` tasks drawn from the split (shuffled per epoch by `seed`). */
    async planTasks(input: z.input<typeof PlanTasksInputSchema>): Promise<{ ref: string; tasks: string[] }> {
      const o = parseInput(PlanTasksInputSchema, input, 'planTasks');
      return withFailureMapping(async () => {
        const ws = await openWorkspace(o, defaults);
        const env = make(o.envId, defined({ kwargs: o.envKwargs }));
        let listed;
        try {
          listed = env.listTasks?.(o.split);
        } finally {
          await env.close();
        }
        if (listed === undefined) throw new Error(`${o.envId} cannot list tasks; the pipeline needs a task list`);
        const plans = planEpisodes({ seed: o.seed, tasks: listed, shuffle: true, groupSize: 1, n: o.groups });
        const tasks = plans.map((p) => p.task?.id ?? '');
        const entry = await ws.store.putJson(
          { format: 'gymflow.task-set', envId: o.envId, split: o.split, tasks: plans.map((p) => p.task) },
          { kind: 'task-set', meta: { groups: tasks.length, seed: o.seed } },
        );
        return { ref: entry.ref, tasks };
      });
    },

    /**
     * Collects one shard: a group of `groupSize` episodes per listed task. Heartbeats episodes done;
     * cancelled, it stops starting episodes, lets those in flight finish and reports the cancellation.
     */
    async collectShard(input: z.input<typeof CollectShardInputSchema>): Promise<{ ref: string; summary: RolloutSummary }> {
      const o = parseInput(AcceptedCollectShardInputSchema, input, 'collectShard');
      const c = o.collect;
      return withFailureMapping(async () => {
        const ws = await openWorkspace(o, defaults);
        const agent = await actingAgent(ws, c.agent, o.policy, o.served);
        await awaitServed(c.agent, o.served);
        const report = progressReporter('collect', 'episodes', ROLLOUT_PROGRESS);
        const policyParents = [o.policy.onnxRef, o.policy.checkpointRef].filter((r): r is string => r !== undefined && c.agent === 'policy');
        // The schedule positions of the finished episodes, journaled: in the heartbeat details beside the progress.
        let details: Record<string, unknown> = {};
        return inSandboxScope(() => details, () => withJournal(ws, async (journal) => {
          const finished = [...journal.finished.keys()];
          details = { done: finished.length, total: o.tasks.length * c.group_size, finished };
          const result = await collect({
            envId: o.envId,
            ...defined({ envKwargs: c.env_kwargs }),
            agent,
            resolveAgent: policyResolver(policyOptions(c.temperature, c.max_new_tokens, o.served)),
            tasks: o.tasks,
            n: o.tasks.length,
            groupSize: c.group_size,
            seed: o.seed,
            concurrency: c.concurrency,
            ...defined({ maxSteps: c.max_steps, policyVersion: c.agent === 'policy' ? o.policy.iteration : undefined }),
            store: ws.store,
            parents: [...o.parents, ...policyParents],
            signal: Context.current().cancellationSignal,
            resume: journal.finished,
            // The journal writes the episode as the set will store it, serialised once for both.
            onEpisode: async (index, t, stored) => {
              await journal.append(index, t, stored());
              finished.push(index);
            },
            onProgress: (p) => {
              details = { done: p.done, total: p.total, successes: p.successes, finished };
              report(p.done, p.total, details);
            },
          });
          throwIfCancelled();
          // Episodes whose model API stayed unreachable say nothing about the policy: collect the shard again (same
          // seeds) rather than train on them as failures.
          const unreachable = result.summary.failures.byKind[AGENT_UNREACHABLE] ?? 0;
          if (unreachable > 0) {
            // The message of an episode whose agent gave up (others may have failed for other reasons).
            const errors = result.trajectories.map((t) => t.metadata['error'] as { name?: string; message?: string } | undefined);
            const example = errors.find((e) => e?.name === 'RetriesExhaustedError');
            throw ApplicationFailure.retryable(`${unreachable} of ${result.summary.episodes} episodes could not reach the agent ${agent}: ${example?.message ?? 'no message'}`, AGENT_UNREACHABLE);
          }
          // Every episode refused by the model API (a bad key, an unknown model: AGENT_HTTP_4xx): no retry helps, and
          // the set would be all failures that say nothing about the policy.
          const refused = Object.entries(result.summary.failures.byKind).filter(([kind]) => /^AGENT_HTTP_4\d\d$/.test(kind));
          if (refused.length > 0 && refused.reduce((n, [, c]) => n + c, 0) >= result.summary.episodes) {
            const [kind] = refused[0] as [string, number];
            throw ApplicationFailure.nonRetryable(`every episode's request was refused by the agent ${agent}: ${result.summary.failures.firstMessage?.[kind] ?? kind}`, AGENT_REFUSED);
          }
          if (result.ref === undefined) throw new Error('collect stored no set');
          return { ref: result.ref, summary: compact(result.summary) };
        }));
      });
    },

    /**
     * Loads the shards' trajectories (in shard order), scores each with the reward rules of the profile
     * (unless `enabled` is false) and stores them as one set.
     */
    async scoreRollouts(input: z.input<typeof ScoreRolloutsInputSchema>): Promise<{ ref: string; summary: RolloutSummary }> {
      const o = parseInput(AcceptedScoreRolloutsInputSchema, input, 'scoreRollouts');
      const r = o.reward;
      return withFailureMapping(async () => {
        const ws = await openWorkspace(o, defaults);
        if (r.judge !== undefined && o.judgements === undefined) throw configFailure('scoreRollouts: reward.judge is set but no judgements were given (judgeRollouts runs first)');
        const started = Date.now();
        const all: Trajectory[] = [];
        for (const shard of o.shards) all.push(...(await loadTrajectories(ws.store, shard)));
        const report = progressReporter('reward', 'trajectories', ROLLOUT_PROGRESS);
        const rules = rulesEnabled(r);
        const { scored, lineage } = await scoreWithRewardSection(ws.store, all, r, o.envId, { judgements: o.judgements, onScored: report });
        throwIfCancelled();
        const summary = summarize(scored, { total: 0, byKind: {} }, Date.now() - started);
        const entry = await putTrajectories(ws.store, scored, {
          kind: rules ? 'scored-trajectories' : 'trajectories',
          parents: o.judgements === undefined ? o.shards : [...o.shards, o.judgements],
          meta: { ...o.meta, envId: o.envId, shards: o.shards.length, summary: { ...summary }, reward: lineage },
          ...defined({ name: o.name }),
        });
        return { ref: entry.ref, summary: compact(summary) };
      });
    },

    /**
     * Exports the scored set in the trainer's format and stores the dataset. No records at all (say
     * `success_only` with a policy that never succeeds) fails for good, naming the export section.
     */
    async exportTrainingData(input: z.input<typeof ExportTrainingDataInputSchema>): Promise<ExportTrainingDataResult> {
      const o = parseInput(AcceptedExportTrainingDataInputSchema, input, 'exportTrainingData');
      const e = o.export;
      return withFailureMapping(async () => {
        const ws = await openWorkspace(o, defaults);
        const loaded = await loadTrajectories(ws.store, o.setRef);
        const { trajectories, stale } = applyStaleness(loaded, o.staleness);
        const out = path.join(ws.workDir, 'tmp', `export-${randomUUID()}.jsonl`);
        try {
          const report = await exportDataset({
            format: e.format,
            trajectories,
            out,
            force: true,
            allowEmpty: true, // reported below, naming the stage's field
            seed: o.seed,
            tools: registryToolLookup(),
            filters: {
              ...(e.success_only ? { successOnly: true } : {}),
              ...defined({ minReward: e.min_reward, maxSteps: e.max_steps }),
            },
            ...defined({ top: e.top }),
            ...(e.dedup ? { dedup: true } : {}),
            pairs: (ts) =>
              resolvePairs(ts, buildPreferences(ts, { minMargin: e.min_margin, ...defined({ maxPairsPerTask: e.max_pairs_per_task }) }).pairs),
          });
          if (report.records === 0) {
            const dropped = stale === undefined || stale.dropped === 0 ? '' : ` after ${stale.dropped} stale trajectories were dropped (${o.staleness?.field})`;
            throw ApplicationFailure.nonRetryable(
              `${o.field}: the ${e.format} export of ${report.input} trajectories has no records (${report.kept} kept by the filters${dropped}); nothing to train on`,
              'DATA_ERROR',
            );
          }
          const entry = await ws.store.putFile(out, {
            kind: 'dataset',
            parents: [o.setRef],
            meta: { format: e.format, records: report.records, kept: report.kept, input: report.input, notes: report.notes, ...defined({ staleness: stale }) },
            ...defined({ name: o.name }),
          });
          return { ref: entry.ref, records: report.records, kept: report.kept, input: report.input, ...defined({ staleness: stale }) };
        } finally {
          await rm(out, { force: true });
        }
      });
    },

    /**
     * Evaluates the policy (or `agent`) on the eval split: `repeats` trials of `tasks` (default: the split's size)
     * seeded episodes, task i = split[i mod |split|] in every trial (`evaluate`'s `trials`, so with repeats > 1 the
     * result carries pass^1 … pass^repeats), the result stored as an `eval` artifact. Returns the headline numbers.
     */
    async evaluatePolicy(input: z.input<typeof EvaluatePolicyInputSchema>): Promise<EvalSummary> {
      const o = parseInput(AcceptedEvaluatePolicyInputSchema, input, 'evaluatePolicy');
      const ev = o.eval;
      // No agent in the section: the loop's policy.
      const agentName = ev.agent ?? 'policy';
      return withFailureMapping(async () => {
        const ws = await openWorkspace(o, defaults);
        const agent = await actingAgent(ws, agentName, o.policy, o.served);
        await awaitServed(agentName, o.served);
        const probe = make(o.envId, defined({ kwargs: ev.env_kwargs }));
        let splitSize: number;
        try {
          splitSize = probe.listTasks?.(ev.split).length ?? 0;
        } finally {
          await probe.close();
        }
        const tasks = ev.tasks ?? splitSize;
        // Every episode, all trials together. One trial is the first `tasks` episodes, as runs before trials made it.
        const n = tasks * ev.repeats;
        const report = progressReporter('eval', 'episodes', ROLLOUT_PROGRESS);
        const signal = Context.current().cancellationSignal;
        let finished: number[] = [];
        let done = 0;
        const { result, entry } = await inSandboxScope(() => ({ done, total: n, finished }), () => withJournal(ws, async (journal) => {
          finished = [...journal.finished.keys()];
          done = finished.length;
          const evaluation = evaluate({
            envId: o.envId,
            ...defined({ envKwargs: ev.env_kwargs, calibrationBinSize: ev.calibration_bins }),
            agent,
            split: ev.split,
            n: tasks,
            trials: ev.repeats,
            seed: ev.seed,
            concurrency: ev.concurrency,
            ...defined({ maxSteps: ev.max_steps }),
            resolveAgent: policyResolver(policyOptions(ev.temperature, ev.max_new_tokens, o.served)),
            resume: journal.finished,
            onEpisode: async (record, trajectory) => {
              await journal.append(record.index, trajectory);
              finished.push(record.index);
              report(++done, n, { done, total: n, finished });
              // evaluate has no abort signal: failing the next episode stops it.
              if (signal.aborted) throw new Error('cancelled');
            },
          });
          const result = await evaluation.catch((err: unknown) => {
            throwIfCancelled();
            throw err;
          });
          throwIfCancelled();
          const parents = [o.policy.onnxRef, o.policy.checkpointRef].filter((r): r is string => r !== undefined && agentName === 'policy');
          const entry = await ws.store.putJson(result, {
            kind: 'eval',
            parents,
            meta: { envId: o.envId, agent: agentName === 'policy' ? `policy@${o.policy.iteration}` : agentName, split: ev.split, n, success: result.metrics.success.mean },
            ...defined({ name: o.name }),
          });
          return { result, entry };
        }));
        const s = result.metrics.success;
        return {
          ref: entry.ref,
          success: { value: s.mean ?? 0, low: s.wilson?.low ?? 0, high: s.wilson?.high ?? 0, n: s.n },
          meanReward: result.metrics.reward.mean ?? 0,
          meanSteps: result.metrics.steps.mean ?? 0,
          ...defined({ passK: result.passK, calibrationError: result.calibration?.rmsError }),
        };
      });
    },
  };
}

/** What `evaluatePolicy` returns. */
export interface EvalSummary {
  ref: string;
  success: { value: number; low: number; high: number; n: number };
  meanReward: number;
  meanSteps: number;
  /** pass^1 … pass^repeats with their bootstrap intervals, when the section's `repeats` is above 1. */
  passK?: PassKSummary[];
  /** The RMS calibration error of the stated confidences, when the environment reads them (`gymflow/qa-v0`). */
  calibrationError?: number;
}
