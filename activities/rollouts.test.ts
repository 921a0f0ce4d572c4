/**
 * What `collectShard` does when the policy's model API is not there, run as a real activity (the SDK's
 * MockActivityEnvironment supplies the context) against a real HTTP server standing in for a policy server
 * that lists the model but answers every completion with 503: the shard fails retryably instead of storing
 * episodes that failed for want of a server as if the policy had failed them; a server that never lists the
 * model fails the attempt after the startup timeout.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { registerBuiltinEnvs } from '../src/envs/register.js';
import { parseEvalResult } from '../src/eval/result.js';
import { ArtifactStore } from '../src/hub/store/store.js';
import { putTrajectories } from '../src/hub/store/trajectory-set.js';
import { collect } from '../src/hub/collect.js';
import { resolveAgent } from '../src/policy/specs.js';
import {
  AcceptedCollectShardInputSchema,
  AcceptedEvaluatePolicyInputSchema,
  AcceptedExportTrainingDataInputSchema,
  AcceptedScoreRolloutsInputSchema,
  createRolloutActivities,
  EvaluatePolicyInputSchema,
  evaluatePolicyInputFromFields,
  ExportTrainingDataInputSchema,
  exportTrainingDataInputFromFields,
  ScoreRolloutsInputSchema,
  scoreRolloutsInputFromFields,
  CollectShardInputSchema,
  collectShardInputFromFields,
  type EvalSummary,
  type ExportTrainingDataResult,
} from './rollouts.js';
import type { z } from 'zod';

const MODEL = 'exp-iter-1-abcdefabcdef';

describe('collectShard with a served policy whose server is not there', () => {
  let root: string;
  let server: Server;
  let baseURL: string;
  let completions = 0;
  let status = 503;

  beforeAll(() => registerBuiltinEnvs());
  beforeEach(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'gymflow-collect-served-'));
    completions = 0;
    status = 503;
    server = createServer((req, res) => {
      if (req.url === '/v1/models') return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', data: [{ id: MODEL, object: 'model' }] }));
      completions++;
      // Overloaded (503): retryable (the policy's 4 retries back off for about 6 s in all). 401: refused, not retried.
      const error = status === 401 ? { message: 'invalid api key', type: 'invalid_request_error' } : { message: 'overloaded', type: 'server_error' };
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ error }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  afterEach(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await rm(root, { recursive: true, force: true });
  });

  const input = (model: string, startupTimeout = '30s'): z.input<typeof CollectShardInputSchema> => ({
    envId: 'gymflow/tool-use-v0',
    policy: { checkpointRef: `sha256:${'ab'.repeat(32)}`, iteration: 1 },
    collect: { agent: 'policy', group_size: 2, concurrency: 2, temperature: 1 },
    served: { model, baseURL, tokenIds: true, startupTimeout },
    tasks: ['tool-train-00000'],
    seed: 0,
    parents: [],
    store: path.join(root, 'store'),
    workDir: path.join(root, 'work'),
  });

  it('fails the shard retryably rather than store episodes that never reached the model', async () => {
    const failure = await new MockActivityEnvironment().run(createRolloutActivities({}).collectShard, input(MODEL)).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect(failure).toMatchObject({ type: 'AGENT_UNREACHABLE', nonRetryable: false });
    const url = baseURL.replace(/[.]/g, '\\.');
    expect((failure as Error).message).toMatch(new RegExp(`^2 of 2 episodes could not reach the agent openai:${MODEL}@${url}: openai \\(${MODEL} at ${url}\\): HTTP 503 .*gave up after 5 attempts`));
    expect(completions).toBe(10); // two episodes, each the first request and its 4 retries
  });

  it('fails the shard for good when the API refuses every request (a bad key)', async () => {
    status = 401;
    const failure = await new MockActivityEnvironment().run(createRolloutActivities({}).collectShard, input(MODEL)).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect(failure).toMatchObject({ type: 'AGENT_REFUSED', nonRetryable: true });
    expect((failure as Error).message).toMatch(/^every episode's request was refused by the agent openai:.*: openai \(.*\): HTTP 401 invalid api key \(check OPENAI_API_KEY\)$/);
    expect(completions).toBe(2); // one request per episode, none retried
  });

  it('waits for the model to be listed, and fails the attempt retryably when it never is', async () => {
    const failure = await new MockActivityEnvironment().run(createRolloutActivities({}).collectShard, input('exp-iter-2-other', '2s')).catch((e: unknown) => e);
    expect(failure).toMatchObject({ type: 'SERVER_NOT_READY', nonRetryable: false });
    expect((failure as Error).message).toContain(`the server lists '${MODEL}', not 'exp-iter-2-other'`);
    expect(completions).toBe(0);
  });
});

type EvaluatePolicyInput = z.input<typeof EvaluatePolicyInputSchema>;

/** The input of the first `activity` that a recorded history scheduled (before configuration sections passed through). */
async function recordedInput(activity: string): Promise<Record<string, unknown>> {
  const history = JSON.parse(await readFile(fileURLToPath(new URL('../tests/histories/pipeline-pass.json', import.meta.url)), 'utf8')) as {
    events: { activityTaskScheduledEventAttributes?: { activityType: { name: string }; input: { payloads: { data: string }[] } } }[];
  };
  const scheduled = history.events.map((e) => e.activityTaskScheduledEventAttributes).find((a) => a?.activityType.name === activity);
  const payload = scheduled?.input.payloads[0];
  if (payload === undefined) throw new Error(`pipeline-pass.json schedules no ${activity}`);
  return JSON.parse(Buffer.from(payload.data, 'base64').toString('utf8')) as Record<string, unknown>;
}

describe('evaluatePolicy', () => {
  let root: string;
  beforeAll(() => registerBuiltinEnvs());
  beforeEach(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'gymflow-evaluate-'));
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('reads the input of runs scheduled before the eval section passed through as it is', async () => {
    const old = await recordedInput('evaluatePolicy');
    // The shape those runs scheduled: the section's fields one by one, camelCased, beside the rest.
    expect(old).toMatchObject({ agent: 'expert', split: 'heldout', tasks: 2, repeats: 1, seed: 0, concurrency: 4, temperature: 0 });
    expect(old).not.toHaveProperty('eval');
    const current = {
      envId: old['envId'],
      policy: old['policy'],
      eval: { agent: 'expert', split: 'heldout', tasks: 2, repeats: 1, seed: 0, concurrency: 4, temperature: 0 },
      name: old['name'],
    };
    expect(AcceptedEvaluatePolicyInputSchema.parse(old)).toEqual(EvaluatePolicyInputSchema.parse({ ...current, store: old['store'], workDir: old['workDir'] }));
    // maxSteps and maxNewTokens become the section's max_steps and max_new_tokens; a wrong one is named as such.
    expect(evaluatePolicyInputFromFields({ ...old, maxSteps: 7, maxNewTokens: 32 })).toMatchObject({ eval: { max_steps: 7, max_new_tokens: 32 } });
    expect(AcceptedEvaluatePolicyInputSchema.safeParse({ ...old, maxSteps: 0 }).error?.issues[0]?.path).toEqual(['eval', 'max_steps']);

    // Both shapes run, and evaluate the same episodes.
    const where = { store: path.join(root, 'store'), workDir: path.join(root, 'work') };
    const activities = createRolloutActivities({});
    // The old shape, which the parameter's type no longer describes (a workflow could not send it now).
    const fromOld = await new MockActivityEnvironment().run<[EvaluatePolicyInput], EvalSummary, typeof activities.evaluatePolicy>(activities.evaluatePolicy, { ...old, ...where } as unknown as EvaluatePolicyInput);
    const fromCurrent = await new MockActivityEnvironment().run<[EvaluatePolicyInput], EvalSummary, typeof activities.evaluatePolicy>(activities.evaluatePolicy, { ...current, ...where } as EvaluatePolicyInput);
    expect(fromOld.success).toEqual({ value: 1, low: expect.any(Number) as number, high: 1, n: 2 });
    // (The stored results differ in their timings, so in their refs.)
    expect({ ...fromCurrent, ref: undefined }).toEqual({ ...fromOld, ref: undefined });
  });

  it('runs `repeats` trials of the first `tasks` tasks and stores pass^k in the eval artifact', async () => {
    const where = { store: path.join(root, 'store'), workDir: path.join(root, 'work') };
    const input = {
      envId: 'gymflow/tool-use-v0',
      policy: { checkpointRef: `sha256:${'ab'.repeat(32)}`, iteration: 1 },
      eval: { agent: 'expert', split: 'heldout', tasks: 2, repeats: 3, seed: 0, concurrency: 2, temperature: 0 },
      ...where,
    } as const;
    const activities = createRolloutActivities({});
    const summary = await new MockActivityEnvironment().run<[EvaluatePolicyInput], EvalSummary, typeof activities.evaluatePolicy>(activities.evaluatePolicy, input);
    expect(summary.success).toMatchObject({ value: 1, n: 6 });
    const store = await ArtifactStore.open({ root: where.store });
    const result = parseEvalResult(await store.getJson(summary.ref), summary.ref);
    expect(result).toMatchObject({ n: 6, trials: 3, tasks: 2 });
    // The split's first two tasks, three times over (not six distinct tasks).
    const ids = result.episodes.map((e) => e.taskId);
    expect(ids.slice(2)).toEqual([...ids.slice(0, 2), ...ids.slice(0, 2)]);
    expect(result.passK?.map((p) => [p.k, p.value])).toEqual([
      [1, 1],
      [2, 1],
      [3, 1],
    ]);
  });
});

describe('exportTrainingData with asynchronous RL\'s staleness bound', () => {
  let root: string;
  beforeAll(() => registerBuiltinEnvs());
  beforeEach(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'gymflow-export-stale-'));
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  /**
   * A scored set of two groups of 2 expert episodes each on the same tasks, the first group's steps recorded as chosen
   * by policy version 1, the second's by version 3; the export trains policy version 4.
   */
  async function mixedBatch(): Promise<string> {
    const store = await ArtifactStore.open({ root: path.join(root, 'store') });
    const common = { resolveAgent, envId: 'gymflow/tool-use-v0', agent: 'expert', tasks: ['tool-train-00000', 'tool-train-00001'], n: 2, groupSize: 2, concurrency: 2 } as const;
    const old = await collect({ ...common, seed: 1, policyVersion: 1, store });
    const recent = await collect({ ...common, seed: 2, policyVersion: 3, store });
    const set = await putTrajectories(store, [...old.trajectories, ...recent.trajectories], { kind: 'scored-trajectories' });
    return set.ref;
  }
  const input = (setRef: string, onStale: 'drop' | 'fail'): z.input<typeof ExportTrainingDataInputSchema> => ({
    setRef,
    export: { format: 'rl', success_only: false, dedup: false, min_margin: 0.1 },
    field: '$.export',
    seed: 0,
    staleness: { policy_version: 4, max_staleness: 1, on_stale: onStale, field: '$.rl.async.max_staleness' },
    store: path.join(root, 'store'),
    workDir: path.join(root, 'work'),
  });

  it('on_stale: fail refuses a batch older than max_staleness, for good, naming the field and the versions', async () => {
    const activities = createRolloutActivities({});
    const failure = await new MockActivityEnvironment().run(activities.exportTrainingData, input(await mixedBatch(), 'fail')).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect(failure).toMatchObject({ type: 'STALE_BATCH', nonRetryable: true });
    expect((failure as Error).message).toBe(
      '$.rl.async.max_staleness: 4 of 8 trajectories were acted by a policy older than version 3 (the oldest: version 1, 3 versions behind the policy ' +
        'this training updates, version 4), past max_staleness 1; the batch is refused (on_stale: fail; on_stale: drop leaves them out)',
    );
  });

  it('on_stale: drop trains on the fresh trajectories only, and says how many went', async () => {
    const activities = createRolloutActivities({});
    const out = (await new MockActivityEnvironment().run(activities.exportTrainingData, input(await mixedBatch(), 'drop'))) as ExportTrainingDataResult;
    // 8 trajectories read, the 4 of version 1 dropped (3 behind), the export's input the 4 of version 3 (1 behind).
    expect(out).toMatchObject({ input: 4, staleness: { maxSeen: 3, dropped: 4 } });
    const store = await ArtifactStore.open({ root: path.join(root, 'store') });
    const records = (await store.getText(out.ref)).trim().split('\n').map((l) => JSON.parse(l) as { group: { policy_versions?: number[] }[] });
    // Every member left was acted by version 3, and its record says so per step.
    const versions = records.flatMap((r) => r.group.flatMap((m) => m.policy_versions ?? []));
    expect(versions.length).toBeGreaterThan(0);
    expect(new Set(versions)).toEqual(new Set([3]));
    expect(records.flatMap((r) => r.group)).toHaveLength(4);
  });
});

describe('exportTrainingData', () => {
  it('reads the input of runs scheduled before the export section passed through as it is', async () => {
    const old = await recordedInput('exportTrainingData');
    expect(old).toMatchObject({ format: 'sft', successOnly: true, dedup: false, minMargin: 0.1 });
    expect(old).not.toHaveProperty('export');
    const { format, successOnly, dedup, minMargin, ...rest } = old;
    const current = { ...rest, export: { format, success_only: successOnly, dedup, min_margin: minMargin } };
    expect(AcceptedExportTrainingDataInputSchema.parse(old)).toEqual(ExportTrainingDataInputSchema.parse(current));
    expect(AcceptedExportTrainingDataInputSchema.parse(current)).toEqual(ExportTrainingDataInputSchema.parse(current));
    // The optional filters become the section's snake_case fields.
    const filters = { minReward: 0.5, maxSteps: 7, top: 3, maxPairsPerTask: 2 };
    expect(exportTrainingDataInputFromFields({ ...old, ...filters })).toMatchObject({ export: { min_reward: 0.5, max_steps: 7, top: 3, max_pairs_per_task: 2 } });
    // The format stays required (the workflow resolves it from the train command).
    const { format: _format, ...withoutFormat } = old;
    expect(AcceptedExportTrainingDataInputSchema.safeParse(withoutFormat).error?.issues[0]?.path).toEqual(['export', 'format']);
  });
});

describe('collectShard', () => {
  it('reads the input of runs scheduled before the collect section passed through as it is', async () => {
    const old = await recordedInput('collectShard');
    // The shape those runs scheduled: the section's fields one by one, camelCased, beside the shard's plan.
    expect(old).toMatchObject({ agent: 'expert', groupSize: 1, concurrency: 2, temperature: 1 });
    expect(old).not.toHaveProperty('collect');
    const { agent, groupSize, concurrency, temperature, ...rest } = old;
    const current = { ...rest, collect: { agent, group_size: groupSize, concurrency, temperature } };
    expect(AcceptedCollectShardInputSchema.parse(old)).toEqual(CollectShardInputSchema.parse(current));
    expect(AcceptedCollectShardInputSchema.parse(current)).toEqual(CollectShardInputSchema.parse(current));
    // The shard's own task ids and seed stay beside the section; the optional limits become its fields.
    expect(collectShardInputFromFields({ ...old, maxSteps: 7, maxNewTokens: 32 })).toMatchObject({ tasks: old['tasks'], seed: old['seed'], collect: { max_steps: 7, max_new_tokens: 32 } });
    expect(AcceptedCollectShardInputSchema.safeParse({ ...old, groupSize: 0 }).error?.issues[0]?.path).toEqual(['collect', 'group_size']);
  });
});

describe('scoreRollouts', () => {
  it('reads the input of runs scheduled before the reward section passed through as it is', async () => {
    const old = await recordedInput('scoreRollouts');
    expect(old).toMatchObject({ enabled: true, concurrency: 8 });
    expect(old).not.toHaveProperty('reward');
    const { enabled, concurrency, ...rest } = old;
    const current = { ...rest, reward: { enabled, concurrency } };
    expect(AcceptedScoreRolloutsInputSchema.parse(old)).toEqual(ScoreRolloutsInputSchema.parse(current));
    expect(scoreRolloutsInputFromFields({ ...old, profile: 'tool-use' })).toMatchObject({ reward: { enabled: true, profile: 'tool-use', concurrency: 8 } });
    expect(AcceptedScoreRolloutsInputSchema.safeParse({ ...old, concurrency: 0 }).error?.issues[0]?.path).toEqual(['reward', 'concurrency']);
  });
});
