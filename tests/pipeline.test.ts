/**
 * The durable pipeline end to end on a real Temporal dev server (search attributes registered as
 * `gymflow dev` does), with the real CPU and GPU workers, the real Python trainer, ONNX export and local
 * policy: a full `trainingLoop` (baseline → SFT on expert rollouts → RL on the policy's own GRPO groups),
 * pause/resume, graceful and aborting cancels, a trainer killed mid-run and resumed on retry, and bad
 * configurations failing fast with the field named.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { WorkflowFailedError, type WorkflowHandle, type WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { afterAll, beforeAll, expect, it, onTestFinished } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { EvalResultSchema } from '../src/eval/result.js';
import { fixtureResponse, hlePolicyAndJudge } from '../src/reward/judge/__fixtures__/hle-judge.js';
import { LoopbackApi } from '../src/reward/judge/__fixtures__/loopback-api.js';
import { ArtifactStore } from '../src/hub/store/store.js';
import { loadTrajectories } from '../src/hub/store/trajectory-set.js';
import { parsePipelineConfig, type PipelineConfig } from '../src/loop/config.js';
import { SEARCH_ATTRIBUTES, SearchAttributeKeys } from '../src/loop/search-attributes.js';
import type { PipelineStatus } from '../src/loop/status.js';
import { runWorker as runCpuWorker } from '../workers/cpu.js';
import { runWorker as runGpuWorker } from '../workers/gpu.js';
import { cancelSignal, pauseSignal, pipeline, pipelineStatusQuery, resumeSignal, trainingLoop } from '../workflows/index.js';
import { processesMentioning } from './support/processes.js';
import { requires } from './support/requires.js';
import { tensorboardPoints } from './support/tensorboard.js';
import { freePort, startLocalTemporal, type LocalTemporal } from './support/temporal.js';
import { PACKAGE_ROOT } from '../src/core/package-root.js';

const temporal = requires.temporal();
const python = requires.python(['torch', 'transformers', 'onnx', 'onnxruntime', 'tensorboard', 'gymflow_trainer']);

try {
  Runtime.install({ logger: new DefaultLogger('WARN') });
} catch {
  // already installed
}

const TINY = { hidden_size: 32, intermediate_size: 64, num_hidden_layers: 1, num_attention_heads: 2, num_key_value_heads: 1, max_position_embeddings: 4096 };
const ENV = 'gymflow/tool-use-v0';
/** The SFT phase collects from this variant (`collect.env`); evaluation stays on ENV. */
const RANDOMIZED_ENV = 'gymflow/tool-use-randomized-v0';

/** `s` as one word for sh. */
const shellWord = (s: string): string => `'${s.replaceAll("'", `'\\''`)}'`;

/**
 * Holds the SFT trainer that the in-process GPU worker starts during the current test after its first step:
 * `reached()` resolves once it waits there, `release()` (or the test's end) lets it go on. `$GYMFLOW_PYTHON`,
 * which the worker reads at each launch, becomes a script that runs `-m gymflow_trainer sft` through a launcher
 * whose progress event of step 1 waits for a file, and every other command as it is.
 */
async function holdTrainingAfterFirstStep(dir: string): Promise<{ reached(): Promise<void>; release(): void }> {
  await mkdir(dir, { recursive: true });
  const reachedFile = path.join(dir, 'reached');
  const released = path.join(dir, 'released');
  const launcher = path.join(dir, 'held.py');
  const before = process.env['GYMFLOW_PYTHON'];
  const python = before ?? path.join(PACKAGE_ROOT, '.venv', 'bin', 'python');
  const held = ['import os, sys, time', 'from gymflow_trainer import cli', 'from gymflow_trainer.events import EventWriter', 'real = EventWriter.progress', '', ''];
  held.push('def progress(self, **fields):', '    real(self, **fields)', '    if fields.get("step") == 1:', `        open(${JSON.stringify(reachedFile)}, "w").close()`);
  held.push(`        while not os.path.exists(${JSON.stringify(released)}):`, '            time.sleep(0.05)', '', '');
  await writeFile(launcher, [...held, 'EventWriter.progress = progress', 'sys.exit(cli.main(sys.argv[1:]))', ''].join('\n'));
  const wrapper = path.join(dir, 'python');
  const script = [
    '#!/bin/sh',
    `if [ "$1" = -m ] && [ "$2" = gymflow_trainer ] && [ "$3" = sft ]; then shift 2; exec ${shellWord(python)} ${shellWord(launcher)} "$@"; fi`,
    `exec ${shellWord(python)} "$@"`,
    '',
  ];
  await writeFile(wrapper, script.join('\n'), { mode: 0o755 });
  process.env['GYMFLOW_PYTHON'] = wrapper;
  const release = (): void => writeFileSync(released, '');
  onTestFinished(() => {
    if (before === undefined) delete process.env['GYMFLOW_PYTHON'];
    else process.env['GYMFLOW_PYTHON'] = before;
    release();
  });
  const reached = async (): Promise<void> => {
    const deadline = Date.now() + 150_000;
    while (!existsSync(reachedFile)) {
      if (Date.now() > deadline) throw new Error(`the trainer did not reach its first step within 150 s (${dir})`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  return { reached, release };
}

temporal.describe('pipeline on Temporal', () => {
  python.describe('with the trainer', () => {
    let local: LocalTemporal | undefined;
    let env: LocalTemporal['env'] | undefined;
    let dir = '';
    const cpuQueue = `gymflow-${randomUUID()}`;
    const gpuQueue = `gymflow-gpu-${randomUUID()}`;
    const stopWorkers = new AbortController();
    let workers: Promise<unknown> | undefined;

    beforeAll(async () => {
      dir = await mkdtemp(path.join(tmpdir(), 'gymflow-pipeline-'));
      local = await startLocalTemporal({ dbFilename: path.join(dir, 'temporal.db'), searchAttributes: SEARCH_ATTRIBUTES });
      env = local.env;
      const common = { connection: env.nativeConnection, namespace: env.namespace ?? 'default', signal: stopWorkers.signal, store: path.join(dir, 'store'), workDir: path.join(dir, 'work'), log: () => undefined };
      workers = Promise.all([runCpuWorker({ ...common, taskQueue: cpuQueue }), runGpuWorker({ ...common, taskQueue: gpuQueue, killGraceMs: 3000 })]);
      workers.catch(() => undefined);
    });

    afterAll(async () => {
      stopWorkers.abort();
      await workers?.catch(() => undefined);
      await local?.teardown();
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    function config(overrides: Record<string, unknown>): PipelineConfig {
      return parsePipelineConfig(
        {
          name: `t-${randomUUID().slice(0, 8)}`,
          env: ENV,
          task_queues: { cpu: cpuQueue, gpu: gpuQueue },
          policy: { init: { tiny: TINY } },
          ...overrides,
        },
        'test',
      );
    }

    async function start(c: PipelineConfig): Promise<WorkflowHandleWithFirstExecutionRunId<typeof trainingLoop>> {
      if (!env) throw new Error('no test environment');
      return env.client.workflow.start(trainingLoop, { taskQueue: cpuQueue, workflowId: `${c.name}-${randomUUID()}`, args: [c] });
    }

    async function waitFor(handle: WorkflowHandle, what: string, ok: (s: PipelineStatus) => boolean, timeoutMs = 90_000): Promise<PipelineStatus> {
      const until = Date.now() + timeoutMs;
      let last: PipelineStatus | undefined;
      while (Date.now() < until) {
        try {
          last = await handle.query(pipelineStatusQuery);
          if (ok(last)) return last;
        } catch {
          // not started yet, or between runs of continueAsNew
        }
        await new Promise((r) => setTimeout(r, 250));
      }
      throw new Error(`timed out waiting for ${what}; last status: ${JSON.stringify(last)?.slice(0, 2000)}`);
    }

    // 150 s with the machine's two cores shared by ~10 runnable processes (2026-11-28): a limit 4x that.
    it('runs the loop: baseline, SFT on expert rollouts, RL on the policy’s own groups', { timeout: 600_000 }, async () => {
      const c = config({
        phases: [
          {
            name: 'sft',
            iterations: 1,
            collect: { agent: 'expert', env: RANDOMIZED_ENV, tasks: 4, shard_size: 2 },
            export: { success_only: true },
            // both phases carry AdamW's state: the RL iteration continues the moments stored with SFT's model
            train: { command: 'sft', config: { max_steps: 2, max_length: 512, optim: { carry_state: true }, tensorboard_dir: path.join(dir, 'tb') } },
          },
          {
            name: 'rl',
            iterations: 1,
            collect: { agent: 'policy', tasks: 2, group_size: 2, shard_size: 1, max_steps: 2, max_new_tokens: 16 },
            // the whole prompt (byte-level, ~2,300 tokens): no step is cut, so the trainer sees what the policy saw
            train: { command: 'rl', config: { max_steps: 1, max_length: 4096, optim: { carry_state: true }, tensorboard_dir: path.join(dir, 'tb') } },
          },
        ],
        eval: { tasks: 2, max_steps: 2, max_new_tokens: 16, baseline: true },
        retention: { keep_last: 1, keep_best: false },
      });
      const handle = await start(c);
      const result = await handle.result();

      expect(result.stopReason).toBe('max_iterations');
      expect(result.runs).toBe(3); // baseline, iteration 1, iteration 2: two continueAsNew
      expect(result.history.map((h) => [h.iteration, h.algorithm])).toEqual([
        [0, 'baseline'],
        [1, 'sft'],
        [2, 'rl'],
      ]);
      const first = await env?.client.workflow.getHandle(handle.workflowId, handle.firstExecutionRunId).describe();
      expect(first?.status.name).toBe('CONTINUED_AS_NEW');

      const status = await handle.query(pipelineStatusQuery);
      expect(status).toMatchObject({ workflow: 'trainingLoop', experiment: c.name, env: ENV, state: 'completed', stage: 'done', iteration: 2, maxIterations: 2, phase: 'rl', paused: false, run: 3 });
      expect(status.stopReason).toBe('max_iterations');
      for (const stage of ['tasks', 'collect', 'reward', 'export', 'train', 'policy', 'eval'] as const) {
        expect(status.stages[stage].state, stage).toBe('done');
        expect(status.stages[stage].durationMs, stage).toBeGreaterThanOrEqual(0);
        // collect makes one set per shard; the reward stage's set joins them.
        if (stage !== 'collect') expect(status.stages[stage].ref, stage).toMatch(/^sha256:/);
      }
      expect(status.stages.collect.note).toBe('2/2 shards');
      expect(status.stages.collect.progress).toEqual({ done: 4, total: 4, unit: 'episodes' });
      expect(status.history).toHaveLength(3);
      // The Web UI's current details (the workflow metadata query) follow every run, this third one too, which
      // carries no summary (continue-as-new takes none).
      const metadata = await handle.query<{ currentDetails?: string }>('__temporal_workflow_metadata');
      expect(metadata.currentDetails).toMatch(/^\*\*iteration 2 of 2\*\* · completed: max iterations · run 3\n\n- last evaluated: iteration 2, success \d\.\d{3} \[/);
      const rl = status.history[2];
      expect(rl?.success).toMatchObject({ n: 2 });
      expect(rl?.success?.low).toBeLessThanOrEqual(rl?.success?.value ?? -1);
      expect(rl?.rollouts?.episodes).toBe(4);
      expect(rl?.train?.steps).toBe(1);
      // the real trainer's RL entropy reaches the history (a tiny model's is near ln |V|); SFT reports none
      expect(rl?.train?.entropy).toBeGreaterThan(0);
      // The policy that acted (onnxruntime-node, the SFT checkpoint's ONNX export) computed the log-probs the
      // trainer computes from that checkpoint (~1e-14 here): a stale or wrong policy in the loop would show, as
      // did the prompts cut at max_length 512 before (7.6e-6).
      expect(rl?.train?.mismatchKl).toBeGreaterThanOrEqual(0);
      expect(rl?.train?.mismatchKl).toBeLessThan(1e-8);
      expect(status.history[1]?.train).toBeDefined();
      expect(status.history[1]?.train?.entropy).toBeUndefined();
      expect(status.history[1]?.train?.mismatchKl).toBeUndefined();
      expect(status.stages.train.note).toMatch(/^1 steps, loss \d+\.\d{4}, entropy \d+\.\d{4}, mismatch \d(\.\d)?(e-\d+)?$/);
      expect(status.history[1]?.rollouts).toMatchObject({ episodes: 4, success: 1 });
      expect(status.best?.iteration).toBeGreaterThanOrEqual(0);
      // TensorBoard: each iteration's training curves in a run of its own, and the loop's, one point per iteration.
      const tb = path.join(dir, 'tb', c.name);
      expect((await tensorboardPoints(path.join(tb, 'iter-1-sft')))['sft/loss']?.map(([step]) => step)).toEqual([1, 2]);
      expect((await tensorboardPoints(path.join(tb, 'iter-2-rl')))['rl/entropy']?.map(([step]) => step)).toEqual([1]);
      const loop = await tensorboardPoints(path.join(tb, 'loop'));
      expect(loop['eval/success']?.map(([step]) => step)).toEqual([0, 1, 2]);
      for (const [step, value] of loop['eval/success'] ?? []) expect(value, `iteration ${step}`).toBeCloseTo(status.history[step]?.success?.value ?? Number.NaN, 6);
      expect(loop['train/steps']).toEqual([[1, 2], [2, 1]]);

      // Every ref is an artifact of the store, with the lineage dataset ← rollouts ← shards ← task set.
      const store = await ArtifactStore.open({ root: path.join(dir, 'store') });
      const kinds: Record<string, string> = { tasks: 'task-set', scored: 'scored-trajectories', dataset: 'dataset', checkpoint: 'checkpoint', policy: 'policy', eval: 'eval' };
      for (const [key, kind] of Object.entries(kinds)) {
        const ref = status.history[2]?.refs[key as keyof typeof status.history[2]['refs']];
        expect(ref, key).toBeDefined();
        expect((await store.stat(ref as string)).kind, key).toBe(kind);
      }
      // The optimizer state went with the model: none for SFT (a tiny model built from its config), SFT's for RL.
      const carriedFrom = async (iteration: number): Promise<unknown> =>
        (await store.stat(status.history[iteration]?.refs.checkpoint as string)).meta?.['optimizerFrom'];
      expect(await carriedFrom(1)).toBeNull();
      expect(await carriedFrom(2)).toBe(status.history[1]?.refs.checkpoint);
      // Each checkpoint names its trainer's whole schedule (max_steps cuts SFT's to 2, RL's to 1), which its steps ran.
      for (const [iteration, steps] of [[1, 2], [2, 1]] as const) {
        expect((await store.stat(status.history[iteration]?.refs.checkpoint as string)).meta, `iteration ${iteration}`).toMatchObject({ steps, totalSteps: steps });
      }
      const dataset = await store.stat(status.history[2]?.refs.dataset as string);
      expect(dataset.parents).toEqual([status.history[2]?.refs.scored]);
      expect(await store.getRef(`${c.name}/iter-2/checkpoint`)).toBe(status.history[2]?.refs.checkpoint);
      const rollouts = await store.stat(status.history[2]?.refs.scored as string);
      expect(rollouts.parents).toHaveLength(2); // two shards
      // The RL rollouts were collected by the SFT policy: the shards descend from its ONNX export.
      const shard = await store.stat(rollouts.parents[0] as string);
      expect(shard.parents).toContain(status.history[1]?.refs.policy);
      // The SFT rollouts came from the phase's collect.env, the RL ones from the loop's env.
      const envsOf = async (iteration: number): Promise<string[]> => [...new Set((await loadTrajectories(store, status.history[iteration]?.refs.scored as string)).map((t) => t.envId))];
      expect(await envsOf(1)).toEqual([RANDOMIZED_ENV]);
      expect(await envsOf(2)).toEqual([ENV]);
      // retention (keep_last 1): the models of iterations 0 and 1 were pruned after the iteration that followed
      // each, their entries and lineage kept; iteration 2's, the final policy, were not — nor an earlier model
      // it names too (a step of RL with no reward variance leaves the weights, and so the refs, unchanged).
      const final = status.history[2]?.refs;
      const expected: string[] = [];
      for (const iteration of [0, 1, 2]) {
        for (const key of ['checkpoint', 'policy'] as const) {
          const ref = status.history[iteration]?.refs[key] as string;
          const pruned = iteration < 2 && ref !== final?.[key];
          expect((await store.stat(ref)).prunedAt !== undefined, `iteration ${iteration} ${key}`).toBe(pruned);
          if (pruned && iteration === 1) expected.push(ref);
        }
      }
      expect((await store.stat(status.history[0]?.refs.checkpoint as string)).prunedAt).toBeDefined();
      expect(status.retention).toEqual({ pruned: expected });

      const described = await handle.describe();
      expect(described.typedSearchAttributes.get(SearchAttributeKeys.experiment)).toBe(c.name);
      expect(described.typedSearchAttributes.get(SearchAttributeKeys.env)).toBe(ENV);
      expect(described.typedSearchAttributes.get(SearchAttributeKeys.algorithm)).toBe('rl');
      expect(described.typedSearchAttributes.get(SearchAttributeKeys.iteration)).toBe(2);
      expect(described.typedSearchAttributes.get(SearchAttributeKeys.bestSuccess)).toBe(status.best?.success);
    });

    it('trains on examples/household.yaml, its sizes cut down: SFT on the expert’s episodes, then GRPO on the policy’s own', { timeout: 600_000 }, async () => {
      // The example as a user starts it, with a tiny model, a few tasks and one training step per phase:
      // this keeps the household loop (its tokenizer corpus, long episodes, step limit 50) working end to end.
      type Phase = { iterations: number; collect: Record<string, unknown>; train: { config: Record<string, unknown> } };
      const example = parseYaml(readFileSync(path.join(PACKAGE_ROOT, 'examples', 'household.yaml'), 'utf8')) as Record<string, unknown> & {
        policy: { init: { tiny: Record<string, unknown> } };
        phases: Phase[];
        eval: Record<string, unknown>;
      };
      const [sft, rl] = example.phases;
      if (!sft || !rl) throw new Error('examples/household.yaml: expected an sft and an rl phase');
      Object.assign(example.policy.init.tiny, TINY, { bpe_vocab_size: 512, max_position_embeddings: 8192 });
      Object.assign(sft.collect, { tasks: 4, shard_size: 2 });
      Object.assign(rl, { iterations: 1 });
      Object.assign(rl.collect, { tasks: 2, group_size: 2, shard_size: 1, max_steps: 2, max_new_tokens: 16 });
      for (const phase of [sft, rl]) Object.assign(phase.train.config, { max_steps: 1, tensorboard_dir: path.join(dir, 'tb') });
      Object.assign(example.eval, { tasks: 2, max_steps: 2, max_new_tokens: 16 });
      const c = parsePipelineConfig({ ...example, max_iterations: 2, name: `household-${randomUUID().slice(0, 8)}`, task_queues: { cpu: cpuQueue, gpu: gpuQueue } }, 'examples/household.yaml');

      const handle = await start(c);
      const result = await handle.result();
      expect(result.stopReason).toBe('max_iterations');
      expect(result.history.map((h) => [h.iteration, h.algorithm])).toEqual([
        [0, 'baseline'],
        [1, 'sft'],
        [2, 'rl'],
      ]);
      const status = await handle.query(pipelineStatusQuery);
      expect(status).toMatchObject({ env: 'gymflow/household-v0', state: 'completed', iteration: 2, phase: 'rl' });
      // The expert's episodes succeed (SFT learns from them); the policy's own are GRPO groups of 2.
      expect(status.history[1]?.rollouts).toMatchObject({ episodes: 4, success: 1 });
      expect(status.history[2]?.rollouts?.episodes).toBe(4);
      expect(status.history[2]?.success).toMatchObject({ n: 2 });
      const store = await ArtifactStore.open({ root: path.join(dir, 'store') });
      const episodes = await loadTrajectories(store, status.history[1]?.refs.scored as string);
      expect(new Set(episodes.map((t) => t.envId))).toEqual(new Set(['gymflow/household-v0']));
      expect(episodes.every((t) => t.task.id.startsWith('household-train-'))).toBe(true);
    });

    it('serves each checkpoint (policy.serve): the policy acts through the trainer’s OpenAI-compatible server, with no ONNX export', { timeout: 240_000 }, async () => {
      const port = await freePort();
      const c = config({
        policy: { init: { tiny: TINY }, serve: { port, startup_timeout: '2m' } },
        collect: { agent: 'policy', tasks: 2, group_size: 2, shard_size: 1, max_steps: 2, max_new_tokens: 16 },
        train: { command: 'rl', config: { max_steps: 1, max_length: 512 } },
        // No baseline: two servers (collection, evaluation) show the hand-over; a third would only cost CI time.
        eval: { tasks: 2, max_steps: 2, max_new_tokens: 16, baseline: false },
        max_iterations: 1,
      });
      const handle = await start(c);
      const result = await handle.result();
      expect(result.history.map((h) => h.iteration)).toEqual([1]);
      const status = await handle.query(pipelineStatusQuery);
      expect(status.state).toBe('completed');
      expect(status.stages.policy).toEqual({ state: 'skipped', note: 'served by policy.serve for the stages that act with it' });
      expect(status.stages.eval.state).toBe('done');
      for (const h of status.history) {
        expect(h.refs.policy, `iteration ${h.iteration}`).toBeUndefined();
        expect(h.success?.n).toBe(2);
      }
      // The rollouts came from the initial checkpoint (the trained one's lineage parent), served under its iteration and hash, with
      // the sampled token ids and their log-probs recorded for the RL trainer.
      const store = await ArtifactStore.open({ root: path.join(dir, 'store') });
      const trajectories = await loadTrajectories(store, status.history[0]?.refs.scored as string);
      expect(trajectories).toHaveLength(4);
      const initial = (await store.stat(status.history[0]?.refs.checkpoint as string)).parents.find((p) => p !== status.history[0]?.refs.dataset) as string;
      expect((await store.stat(initial)).kind).toBe('checkpoint');
      const name = `${c.name}-iter-0-${initial.slice('sha256:'.length, 'sha256:'.length + 12)}`;
      for (const t of trajectories) {
        expect(t.agent.name).toBe(`openai:${name}`);
        expect(t.steps.length).toBeGreaterThan(0);
        for (const step of t.steps) {
          expect(step.tokens?.prompt?.length).toBeGreaterThan(0);
          expect(step.tokens?.completion?.length).toBeGreaterThan(0);
          expect(step.logprobs).toHaveLength(step.tokens?.completion?.length ?? -1);
        }
      }
      expect(status.history[0]?.train?.steps).toBe(1);
      // Every server this test started was stopped with its stage (cancellation waits for the process group to be gone).
      expect(processesMentioning('gymflow_trainer\0serve', dir)).toEqual([]);
    });

    it('fails the stage, naming the command, when the policy server cannot start', { timeout: 90_000 }, async () => {
      const c = config({
        policy: { init: { tiny: TINY }, serve: { port: await freePort(), command: ['/nonexistent/vllm', 'serve', '{model}'] } },
        collect: { agent: 'policy', tasks: 1 },
        train: { command: 'sft', config: { max_steps: 1 } },
        eval: { tasks: 1, baseline: true },
        max_iterations: 1,
      });
      const handle = await start(c);
      const err = await handle.result().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(WorkflowFailedError);
      expect((err as WorkflowFailedError).cause?.message).toMatch(/^eval: policy\.serve\.command: cannot start .*\/nonexistent\/vllm.*ENOENT/);
      const status = await handle.query(pipelineStatusQuery);
      expect(status.lastError).toMatchObject({ stage: 'eval', type: 'CONFIG_ERROR' });
    });

    /** An expert-only loop (no ONNX needed) whose training is long enough to be caught running. */
    const expertLoop = (steps: number): PipelineConfig =>
      config({
        collect: { agent: 'expert', tasks: 2, shard_size: 1 },
        train: { command: 'sft', config: { max_steps: steps, epochs: 1000, max_length: 256, save_every: 1, keep_last: 2 } },
        eval: { agent: 'expert', tasks: 2, baseline: false },
        max_iterations: 1,
      });

    it('stops at the target: the first training iteration that reaches it, never the baseline', { timeout: 120_000 }, async () => {
      // The expert evaluates (success 1 from the baseline on), so only the target can end the loop early.
      // Its TensorBoard directory cannot be made (a file is in the way): curves never stop the trainer or the loop.
      const blocked = path.join(dir, 'tb-blocked');
      writeFileSync(blocked, 'not a directory');
      const c = config({
        collect: { agent: 'expert', tasks: 2, shard_size: 1 },
        train: { command: 'sft', config: { max_steps: 1, max_length: 256, tensorboard_dir: blocked } },
        // Two trials of each task (pass^1, pass^2), with keyword arguments for every environment the loop makes.
        eval: { agent: 'expert', tasks: 2, baseline: true, repeats: 2 },
        env_kwargs: { invalidCallPenalty: 0.1 },
        target: { metric: 'heldout_success', value: 0.9 },
        max_iterations: 3,
      });
      const handle = await start(c);
      const result = await handle.result();
      expect(result.stopReason).toBe('target');
      expect(result.history.map((h) => [h.iteration, h.success?.value, h.passK?.map((p) => [p.k, p.value])])).toEqual([
        [0, 1, [[1, 1], [2, 1]]],
        [1, 1, [[1, 1], [2, 1]]],
      ]);
      const status = await handle.query(pipelineStatusQuery);
      expect(status).toMatchObject({ state: 'completed', stopReason: 'target', iteration: 1, maxIterations: 3 });
      expect(status.stages.eval.note).toMatch(/^success 1\.000 \[[0-9.]+, 1\.000\], pass\^2 1\.000$/);
      const store = await ArtifactStore.open({ root: path.join(dir, 'store') });
      const evaluation = EvalResultSchema.parse(await store.getJson(status.history[1]?.refs.eval as string));
      expect(evaluation).toMatchObject({ envKwargs: { invalidCallPenalty: 0.1 }, trials: 2, n: 4 });
      expect(readFileSync(blocked, 'utf8')).toBe('not a directory');
    });

    it('evaluates eval.benchmarks every iteration: a question set graded by HLE\'s judge, with accuracy and the calibration error in the metrics, status and curves', { timeout: 180_000 }, async () => {
      // One loopback OpenAI-compatible server plays the benchmark's policy (three right answers of five, stated
      // confidences 90/80/70/60/none) and HLE's judge; the workers of this process read the key from the environment.
      const api = await LoopbackApi.start(hlePolicyAndJudge(fixtureResponse));
      const keyBefore = process.env['OPENAI_API_KEY'];
      process.env['OPENAI_API_KEY'] = 'EMPTY';
      onTestFinished(async () => {
        if (keyBefore === undefined) delete process.env['OPENAI_API_KEY'];
        else process.env['OPENAI_API_KEY'] = keyBefore;
        await api.close();
      });
      const tb = path.join(dir, 'tb-benchmarks');
      const questions = path.join(PACKAGE_ROOT, 'src/envs/qa/__fixtures__/questions.jsonl');
      const c = config({
        collect: { agent: 'expert', tasks: 2, shard_size: 2 },
        export: { success_only: true },
        train: { command: 'sft', config: { max_steps: 1, max_length: 256, tensorboard_dir: tb } },
        eval: {
          agent: 'expert',
          tasks: 2,
          baseline: true,
          benchmarks: [{ name: 'hle', env: 'gymflow/qa-v0', env_kwargs: { questions, judge: `openai:hle-judge@${api.url}` }, agent: `openai:policy@${api.url}` }],
        },
        max_iterations: 1,
      });
      const handle = await start(c);
      const result = await handle.result();
      expect(result.history.map((h) => [h.iteration, h.success?.value, h.benchmarks?.['hle']?.success?.value, h.benchmarks?.['hle']?.success?.n])).toEqual([
        [0, 1, 0.6, 5],
        [1, 1, 0.6, 5],
      ]);
      for (const h of result.history) {
        expect(h.benchmarks?.['hle']?.calibrationError).toBeCloseTo(0.2, 12);
        expect(h.calibrationError).toBeUndefined();
      }
      const status = await handle.query(pipelineStatusQuery);
      expect(status.stages.eval.note).toMatch(/^success 1\.000 \[[0-9.]+, 1\.000\]; hle: success 0\.600 \[0\.231, 0\.882\], calibration error 0\.200$/);
      // The benchmark's result is an eval artifact of its own, with the calibration and the question left out.
      const store = await ArtifactStore.open({ root: path.join(dir, 'store') });
      const hle = EvalResultSchema.parse(await store.getJson(result.history[1]?.benchmarks?.['hle']?.ref as string));
      expect(hle).toMatchObject({ envId: 'gymflow/qa-v0', n: 5, calibration: { n: 5, binSize: 100 } });
      expect(hle.notes?.[0]).toMatch(/^1 of the 6 questions of .* have an image and were left out/);
      // Ten judge requests: five answers at the baseline and five after the training.
      expect(api.requests.filter((r) => (r.body as { response_format?: unknown }).response_format !== undefined)).toHaveLength(10);
      const loop = await tensorboardPoints(path.join(tb, c.name, 'loop'));
      expect(loop['eval/hle/success']?.map(([step, v]) => [step, Number(v.toFixed(6))])).toEqual([[0, 0.6], [1, 0.6]]);
      expect(loop['eval/hle/calibration_error']?.[0]?.[1]).toBeCloseTo(0.2, 6);
    });

    it('runs shards as local activities with collect.shard_execution: local', { timeout: 120_000 }, async () => {
      if (!env) throw new Error('no test environment');
      const c = config({
        collect: { agent: 'expert', tasks: 4, shard_size: 2, shard_execution: 'local' },
        train: { command: 'sft', config: { max_steps: 1, max_length: 256 } },
        eval: { agent: 'expert', tasks: 2, baseline: false },
        max_iterations: 1,
      });
      const handle = await env.client.workflow.start(pipeline, { taskQueue: cpuQueue, workflowId: `${c.name}-${randomUUID()}`, args: [c] });
      const result = await handle.result();
      expect(result.metrics?.rollouts).toMatchObject({ episodes: 4, success: 1 });
      const status = await handle.query(pipelineStatusQuery);
      expect(status.stages.collect).toMatchObject({ state: 'done', note: '2/2 shards' });
      // The shards are local-activity markers in the history, never scheduled through the server; the rest are activities.
      const events = (await handle.fetchHistory()).events ?? [];
      const scheduled = events.flatMap((e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? []);
      expect(scheduled).not.toContain('collectShard');
      expect(scheduled).toEqual(expect.arrayContaining(['planTasks', 'scoreRollouts', 'train']));
      expect(events.filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity')).toHaveLength(2);
    });

    it('pipeline (one pass): pauses before the next activity, resumes, and a finish-mode cancel lets the running training finish', { timeout: 240_000 }, async () => {
      if (!env) throw new Error('no test environment');
      // The trainer holds after its first step until the cancel is recorded: it lands while the training runs
      // however slow the machine, where a margin of steps (40) could run out first.
      const hold = await holdTrainingAfterFirstStep(path.join(dir, 'hold'));
      const c = expertLoop(8);
      const handle = await env.client.workflow.start(pipeline, { taskQueue: cpuQueue, workflowId: `${c.name}-${randomUUID()}`, args: [c] });
      await handle.signal(pauseSignal);
      const paused = await waitFor(handle, 'paused', (s) => s.state === 'paused');
      expect(paused.paused).toBe(true);
      expect(paused.stages.tasks.state).toBe('pending');
      expect((await handle.query<{ currentDetails?: string }>('__temporal_workflow_metadata')).currentDetails).toBe('**one pass (iteration 1)** · paused before the next stage · run 1');
      await new Promise((r) => setTimeout(r, 1500));
      const still = await handle.query(pipelineStatusQuery);
      expect(still.state).toBe('paused');
      expect(still.stages.tasks.state).toBe('pending');

      await handle.signal(resumeSignal);
      await hold.reached();
      await waitFor(handle, 'training running', (s) => s.stage === 'train' && s.stages.train.state === 'running');
      await handle.signal(cancelSignal, { mode: 'finish', reason: 'test' });
      const cancelled = await waitFor(handle, 'the cancel', (s) => s.cancel?.mode === 'finish');
      expect(cancelled.stages.train.state).toBe('running');
      hold.release();
      const result = await handle.result();
      expect(result.stopReason).toBe('cancelled');
      const status = await handle.query(pipelineStatusQuery);
      expect(status.workflow).toBe('pipeline');
      expect(status.state).toBe('cancelled');
      expect(status.stages.train.state).toBe('done');
      expect(status.stages.train.note).toMatch(/^8 steps/);
      expect(status.stages.eval.state).toBe('pending');
      expect(status.cancel).toMatchObject({ mode: 'finish', reason: 'test', stage: 'train', activity: 'finished' });
    });

    it('retries a training whose trainer was killed, resuming from the heartbeat checkpoint; an abort after a graceful cancel then kills it', { timeout: 300_000 }, async () => {
      const handle = await start(expertLoop(100_000));
      await waitFor(handle, 'a checkpoint', (s) => s.stage === 'train' && (s.stages.train.progress?.done ?? 0) >= 2);
      const runDir = path.join(dir, 'work', 'runs', handle.workflowId);
      const pids = processesMentioning(runDir);
      expect(pids.length).toBeGreaterThan(0);
      for (const pid of pids) process.kill(pid, 'SIGKILL'); // a transient failure, as the OOM killer would cause

      // Temporal retries the activity; the new attempt resumes from the checkpoint in the heartbeat details.
      const resumed = await waitFor(handle, 'the retried training', (s) => /^attempt 2, resumed from .*checkpoint-\d+/.test(s.stages.train.note ?? ''));
      expect(resumed.stages.train.state).toBe('running');
      expect(processesMentioning(runDir).length).toBeGreaterThan(0);

      // A hand-sent progress signal without its fields is dropped, not a failed workflow task.
      await handle.signal('stage_progress');
      // A graceful cancel, then an abort: the abort still stops the training, which would otherwise run on.
      await handle.signal(cancelSignal, { mode: 'finish' });
      await waitFor(handle, 'the graceful cancel', (s) => s.cancel?.mode === 'finish' && s.stages.train.state === 'running');
      await handle.signal(cancelSignal, { mode: 'abort' });
      const result = await handle.result();
      expect(result.stopReason).toBe('cancelled');
      const status = await handle.query(pipelineStatusQuery);
      expect(status.state).toBe('cancelled');
      expect(status.stages.train.state).toBe('cancelled');
      expect(status.cancel).toMatchObject({ mode: 'abort', stage: 'train', activity: 'cancelled', escalatedAt: expect.any(String) });
      const events = (await handle.fetchHistory()).events ?? [];
      expect(events.filter((e) => e.workflowTaskFailedEventAttributes)).toEqual([]);
      // WAIT_CANCELLATION_COMPLETED: by the time the workflow saw the cancellation, the trainer's group was gone.
      expect(processesMentioning(runDir)).toEqual([]);
    });

    it('runs a worker as a program: ready line, graceful exit on SIGTERM', { timeout: 180_000 }, async () => {
      const address = env?.address;
      expect(address).toBeDefined();
      const child = spawn(process.execPath, ['--import', 'tsx', path.join(PACKAGE_ROOT, 'workers', 'gpu.ts'), '--address', address as string, '--task-queue', `prog-${randomUUID()}`, '--shutdown-grace', '2'], {
        cwd: PACKAGE_ROOT,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      // The worker bundles the workflow code before it says ready: seconds idle, far longer on a busy machine.
      const until = Date.now() + 150_000;
      while (!out.includes('gymflow worker ready:') && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
      expect(out).toMatch(new RegExp(`gymflow worker ready: queue=prog-[0-9a-f-]+ address=${(address as string).replace('.', '\\.')}`));
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    });

    it('fails fast on a bad configuration, naming the field', { timeout: 120_000 }, async () => {
      const failure = async (c: unknown): Promise<string> => {
        if (!env) throw new Error('no test environment');
        const handle = await env.client.workflow.start(trainingLoop, { taskQueue: cpuQueue, workflowId: `bad-${randomUUID()}`, args: [c as PipelineConfig] });
        const err = await handle.result().then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(err).toBeInstanceOf(WorkflowFailedError);
        const status = await handle.query(pipelineStatusQuery);
        expect(status.state).toBe('failed');
        expect(status.lastError?.stage).toBe('setup');
        // No retries of a configuration error: every activity ran once (a retried one's start event says attempt 2+).
        const attempts = ((await handle.fetchHistory()).events ?? []).flatMap((e) => (e.activityTaskStartedEventAttributes ? [e.activityTaskStartedEventAttributes.attempt] : []));
        expect(attempts).toEqual(attempts.map(() => 1));
        return `${(err as WorkflowFailedError).cause?.message ?? ''}`;
      };
      const unknownAgent = expertLoop(1);
      (unknownAgent.phases[0] as { collect: { agent: string } }).collect.agent = 'exprt';
      expect(await failure(unknownAgent)).toMatch(/\$\.collect\.agent: unknown agent 'exprt'/);

      // The tokenizer corpus names an agent the environment registers: caught at setup, before the tiny model is built.
      const badCorpus = expertLoop(1);
      badCorpus.policy.init = { tiny: TINY, tokenizer_corpus: 'flawed' };
      expect(await failure(badCorpus)).toMatch(/\$\.policy\.init\.tokenizer_corpus: gymflow\/tool-use-v0 registers no agent 'flawed' to learn a tokenizer from \(it registers: expert\)/);

      const badTrainer = expertLoop(1);
      (badTrainer.phases[0] as { train: { config: Record<string, unknown> } }).train.config['bogus'] = 1;
      expect(await failure(badTrainer)).toMatch(/\$\.train\.config: trainer rejected the configuration: .*unknown key 'bogus'/);

      // Keyword arguments the environment does not take are named by the field they came from.
      expect(await failure({ ...expertLoop(1), env_kwargs: { bogus: 1 } })).toMatch(/\$\.env_kwargs: gymflow\/tool-use-v0: .*bogus/);

      // A store that cannot be a directory is named as the field it came from, not as a file-system error later.
      const aFile = path.join(dir, 'a-file');
      writeFileSync(aFile, '');
      const badStore = { ...expertLoop(1), store: aFile };
      expect(await failure(badStore)).toMatch(new RegExp(`\\$\\.store: ${aFile}: it or a parent of it is a file, not a directory`));
      // A bucket URL is checked as one (never made into a folder `s3:` of the worker's working directory).
      expect(await failure({ ...expertLoop(1), store: 's3://Not_A_Bucket/runs' })).toMatch(/\$\.store: store URL 's3:\/\/Not_A_Bucket\/runs': bucket 'Not_A_Bucket' is not a valid bucket name/);

      // A raw, unvalidated document straight into the workflow: the checkConfig activity names the field.
      const raw = { name: 'raw', env: ENV, task_queues: { cpu: cpuQueue, gpu: gpuQueue }, policy: { init: { tiny: TINY } }, train: { command: 'sft' }, collect: { group_size: 0 }, max_iterations: 1 };
      expect(await failure(raw)).toMatch(/\$\.collect\.group_size: Too small/);
      // An input that is no configuration at all (a hand-written `--input-file`) fails the run at once, instead
      // of a TypeError failing every workflow task forever.
      for (const [args, got] of [[[null], 'null'], [[], 'no input'], [['smoke.yaml'], 'a string']] as const) {
        if (!env) throw new Error('no test environment');
        const handle = await env.client.workflow.start('trainingLoop', { taskQueue: cpuQueue, workflowId: `bad-input-${randomUUID()}`, args: [...args] });
        const err = (await handle.result().catch((e: unknown) => e)) as WorkflowFailedError;
        expect(err).toBeInstanceOf(WorkflowFailedError);
        expect(err.cause).toMatchObject({ type: 'CONFIG_ERROR', message: `trainingLoop input [0] $: expected the pipeline configuration (a JSON object), got ${got}` });
      }
    });
  });
});
