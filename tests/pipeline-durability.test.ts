/**
 * Durability of the pipeline against the real stack: a Temporal dev server started here (so it can be
 * stopped and restarted on the same db file) and the CPU and GPU workers as child processes (so they can be
 * `kill -9`ed), training a tiny model with the real Python trainer.
 *
 * 1. Server restart: the dev server is stopped while the loop trains and started again on the same db file;
 *    the run completes, its training uninterrupted. Its step count is the reference for (2).
 * 2. GPU worker crash: `kill -9` of the GPU worker in the middle of training, a new GPU worker started; the
 *    train activity is retried, resumes from its last checkpoint (not step 0) and ends with the same number
 *    of optimizer steps as the uninterrupted run of (1).
 * 3. Cancel: `cancel` with `mode: abort` while the trainer runs leaves no trainer process behind.
 * 4. GPU worker crash while it serves the policy (`policy.serve`): its server exits with it (the lifeline
 *    and the parent watchdog), `servePolicy` is retried on the new worker, the collection's shards wait for the new server,
 *    and no episode that failed for want of a server is stored or trained on.
 * 5. CPU worker crash mid-collection of 200 episodes acted by a model (a loopback OpenAI-compatible server that
 *    counts the episodes it sees start): the retried shards run only the episodes their episode journals lack, so
 *    the set has every planned episode once and at most the shards' concurrency ran twice.
 * 6. The same during an evaluation of 200 episodes: the retried evaluation runs only the episodes its journal lacks.
 * 7. Docker sandboxes (examples/sandbox.yaml, cut down): `kill -9` of the CPU worker mid-shard — the retry removes
 *    the containers its predecessor left (they carry the workflow, run and activity as labels) and runs only the
 *    episodes it lacked; and a cancel mid-shard. Afterwards `docker ps -a` shows none of the run's containers.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TrainResult } from '../activities/train.js';
import { afterAll, beforeAll, expect } from 'vitest';
import { parsePipelineConfig, type PipelineConfig } from '../src/loop/config.js';
import { freePort } from '../src/runtime/dev-server.js';
import { STORED_RESULT_FILE } from '../src/runtime/run-dir.js';
import type { PipelineStatus } from '../src/loop/status.js';
import { cancelSignal } from '../workflows/messages.js';
import { loadTrajectories } from '../src/hub/store/trajectory-set.js';
import type { Trajectory } from '../src/core/trajectory.js';
import { ArtifactStore } from '../src/hub/store/store.js';
import { parseEvalResult } from '../src/eval/result.js';
import { trainingLoop } from '../workflows/index.js';
import { LoopbackApi, openaiCompletion } from '../src/reward/judge/__fixtures__/loopback-api.js';
import { parse as parseYaml } from 'yaml';
import { PACKAGE_ROOT } from '../src/core/package-root.js';
import { dockerClient } from '../src/sandbox/docker.js';
import { LABEL_WORKFLOW } from '../src/sandbox/scope.js';
import { processesMentioning } from './support/processes.js';
import { requires } from './support/requires.js';
import { until, WaitedInVain } from './support/until.js';
import { newestCheckpoint, WorkerStack } from './support/worker-stack.js';
import { smallLoopConfig, TINY_POLICY } from './support/small-loop.js';

const temporal = requires.temporal();
const python = requires.python(['torch', 'gymflow_trainer']);
const docker = requires.docker();

/** The ids of every container (running or not) labelled with workflow `id`. */
async function workflowContainers(id: string): Promise<string[]> {
  const list = await dockerClient().listContainers({ all: true, filters: { label: [`${LABEL_WORKFLOW}=${id}`] } });
  return list.map((c) => c.Id);
}

/** Live trainer processes whose command line mentions `marker` (the test's scratch directory). */
function trainerPids(marker: string): number[] {
  return processesMentioning('gymflow_trainer', marker);
}

/** What train attempts left under `root` (a workflow's run directories): their result records and trainer outputs. */
function leftInRunDirs(root: string): { records: unknown[]; outputs: string[] } {
  const found: { records: unknown[]; outputs: string[] } = { records: [], outputs: [] };
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.isFile() && e.name === STORED_RESULT_FILE) found.records.push(JSON.parse(readFileSync(join(d, e.name), 'utf8')));
      else if (e.isDirectory() && e.name === 'output') found.outputs.push(join(d, e.name));
      else if (e.isDirectory()) walk(join(d, e.name));
    }
  };
  walk(root);
  return found;
}

/**
 * The model of the crash tests, on a loopback OpenAI-compatible server: every reply submits at once, after 150 ms (so
 * 200 episodes take seconds), and `started()` counts the episodes it saw start (a request without an assistant turn).
 */
async function countingModel(): Promise<{ api: LoopbackApi; started: () => number }> {
  let started = 0;
  const api = await LoopbackApi.start((request) => {
    const messages = (request.body as { messages?: { role: string }[] } | undefined)?.messages ?? [];
    if (!messages.some((m) => m.role === 'assistant')) started++;
    return { delayMs: 150, body: openaiCompletion('<tool_call>\n{"name": "submit", "arguments": {"answer": "0"}}\n</tool_call>') };
  });
  return { api, started: () => started };
}

temporal.describe('pipeline durability on a real dev server', () => {
  let stack: WorkerStack;
  let dir = '';
  /** The train result of the uninterrupted run (test 1), the reference of test 2. */
  let reference: TrainResult | undefined;

  /**
   * Long enough to be interrupted on an idle machine too (the trainer's progress reaches the workflow every
   * few seconds): 6 epochs of batch-1 SFT with a checkpoint every 2 steps.
   */
  const config = (name: string, epochs = 6): PipelineConfig =>
    smallLoopConfig(name, dir, `durability:${name}`, {
      collect: { tasks: 8, shard_size: 4, concurrency: 2 },
      train: { heartbeat_timeout: '15s', config: { epochs, batch_size: 1, max_length: 512, save_every: 2, log_every: 1 } },
      max_iterations: 1,
    });

  /**
   * `kill -9` of the CPU worker (then `afterKill`), a new one started; waits for run `id` to complete and returns
   * the scored rollouts of its last iteration.
   */
  const crashCpuWorkerAndFinish = async (id: string, afterKill?: () => void): Promise<Trajectory[]> => {
    const status = await crashCpuWorkerAndWait(id, afterKill);
    const store = await ArtifactStore.open({ root: join(dir, 'store') });
    return loadTrajectories(store, status.history.at(-1)?.refs.scored as string);
  };
  /** {@link crashCpuWorkerAndFinish}, returning the completed run's status. */
  const crashCpuWorkerAndWait = async (id: string, afterKill?: () => void): Promise<PipelineStatus> => {
    await stack.cpu?.kill();
    afterKill?.();
    stack.cpu = await stack.startCpu();
    await stack.client.workflow.getHandle(id).result();
    const status = await stack.statusOf(id);
    expect(status).toMatchObject({ state: 'completed', stopReason: 'max_iterations' });
    return status;
  };
  /** Resolves once the run's trainer has reported at least `steps` steps. */
  const trainedAtLeast = (id: string, steps: number, timeoutMs = 120_000): Promise<PipelineStatus> =>
    until(`${id} to train ${steps} steps`, timeoutMs, async () => {
      const s = await stack.statusOf(id);
      if (s.state === 'failed' || s.state === 'completed') throw new WaitedInVain(`${id} ended (${s.state}) before training ${steps} steps: ${JSON.stringify(s.lastError)}`);
      return s.stage === 'train' && (s.stages.train.progress?.done ?? 0) >= steps ? s : undefined;
    });

  beforeAll(async () => {
    // The CPU worker has a key for `openai:` agents (the loopback server takes any).
    stack = await WorkerStack.start('durability', { cpuEnv: { OPENAI_API_KEY: 'EMPTY' } });
    dir = stack.dir;
  }, 180_000);

  afterAll(async () => {
    const left = await stack?.stop();
    expect(left, 'trainer processes left behind').toEqual([]);
  }, 120_000);

  python.it('a dev server restart mid-run (same db file): the run completes', async () => {
    const id = 'durable-server';
    const handle = await stack.client.workflow.start(trainingLoop, { taskQueue: 'gymflow', workflowId: id, args: [config('server')] });
    await trainedAtLeast(id, 2);
    await stack.restartServer(2000);

    const result = await stack.client.workflow.getHandle(id, handle.firstExecutionRunId).result();
    expect(result).toBeDefined();
    const status = await stack.statusOf(id);
    expect(status).toMatchObject({ state: 'completed', stopReason: 'max_iterations', iteration: 1 });
    const train = await stack.trainResults(id);
    expect(train).toHaveLength(1);
    expect(train[0]).toMatchObject({ attempt: 1, resumedFrom: null });
    reference = train[0];
    expect(reference?.steps).toBeGreaterThan(8);
    expect(status.history.at(-1)?.train?.steps).toBe(reference?.steps);
    // Once the model was stored, the step checkpoints went; the record a late retry would return stayed.
    expect(leftInRunDirs(join(dir, 'work', 'runs', id))).toEqual({ records: [reference], outputs: [] });
    // 72 s on a busy 2-core machine (2026-11-28), of the 150 s it had.
  }, 300_000);

  python.it('kill -9 of the GPU worker mid-training: the retry resumes from the last checkpoint and ends with the same steps', async () => {
    if (reference === undefined) throw new Error('needs the uninterrupted run of the previous test');
    const id = 'durable-gpu-crash';
    const handle = await stack.client.workflow.start(trainingLoop, { taskQueue: 'gymflow', workflowId: id, args: [config('crash')] });
    // Kill as soon as the trainer has written a checkpoint past step 8 (read from disk: the trainer's progress
    // reaches the workflow only every few seconds, and this training takes seconds on an idle machine).
    const killedAt = await until(`${id} to checkpoint past step 8`, 120_000, () => Promise.resolve(newestCheckpoint(join(dir, 'work', 'runs', id), 8)));
    await stack.gpu?.kill();
    expect(killedAt).toBeLessThan(reference.steps);
    // The dead worker's trainer stops at once (its lifeline reads end-of-file), freeing the GPU for the retry.
    await until('the orphaned trainer to exit', 15_000, async () => (trainerPids(dir).length === 0 ? true : undefined));
    stack.gpu = await stack.startGpu();

    await handle.result();
    const status = await stack.statusOf(id);
    expect(status).toMatchObject({ state: 'completed', stopReason: 'max_iterations' });
    const [train, ...more] = await stack.trainResults(id);
    expect(more).toEqual([]);
    // Retried after the heartbeat timeout, resumed from a checkpoint taken before the kill, not from step 0.
    expect(train?.attempt).toBe(2);
    expect(train?.resumedFrom, 'the retried attempt resumed from a checkpoint').toEqual(expect.stringMatching(/checkpoint-\d+$/));
    const resumedStep = Number(/checkpoint-(\d+)$/.exec(train?.resumedFrom ?? '')?.[1]);
    expect(resumedStep).toBeGreaterThan(0);
    // The same number of optimizer steps as the uninterrupted run — and, resume being exact, the same weights.
    expect(train?.steps).toBe(reference.steps);
    expect(status.history.at(-1)?.train?.steps).toBe(reference.steps);
    expect(train?.checkpointRef).toBe(reference.checkpointRef);
    // The retry that stored the model deleted the step checkpoints of both attempts.
    expect(leftInRunDirs(join(dir, 'work', 'runs', id))).toEqual({ records: [train], outputs: [] });
  }, 240_000);

  python.it('kill -9 of the GPU worker while it serves the policy: the server goes too, comes back on the new worker, and the collection loses no episode', async () => {
    const id = 'durable-serve-crash';
    const c = parsePipelineConfig(
      {
        name: 'serve-crash',
        env: 'gymflow/tool-use-v0',
        store: join(dir, 'store'),
        work_dir: join(dir, 'work'),
        policy: { init: { tiny: { ...TINY_POLICY, max_position_embeddings: 4096 } }, serve: { port: await freePort(), startup_timeout: '3m' } },
        // Enough generation (the server answers one request at a time) to be interrupted.
        collect: { agent: 'policy', tasks: 8, group_size: 2, shard_size: 2, concurrency: 2, max_steps: 3, max_new_tokens: 48 },
        train: { command: 'rl', config: { max_steps: 1, max_length: 512 } },
        eval: { agent: 'expert', tasks: 2, baseline: false },
        max_iterations: 1,
      },
      'durability:serve-crash',
    );
    const handle = await stack.client.workflow.start(trainingLoop, { taskQueue: 'gymflow', workflowId: id, args: [c] });
    const servers = (): number[] => processesMentioning('gymflow_trainer\0serve', dir);
    const first = await until(`${id} to collect through its server`, 120_000, async () => {
      const s = await stack.statusOf(id);
      const pids = servers();
      return s.stage === 'collect' && !(s.stages.collect.note ?? 'starting').startsWith('starting') && pids.length > 0 ? pids : undefined;
    });
    await stack.gpu?.kill();
    stack.gpu = await stack.startGpu();
    // The server saw its parent die (its lifeline and its parent watchdog) and stopped; nothing else would
    // have freed the GPU and the port.
    await until('the dead worker’s server to exit', 30_000, async () => (servers().every((pid) => !first.includes(pid)) ? true : undefined));

    await handle.result();
    const status = await stack.statusOf(id);
    expect(status).toMatchObject({ state: 'completed', stopReason: 'max_iterations' });
    // servePolicy was retried (the new worker took it after the heartbeat timeout), once.
    const history = await stack.client.workflow.getHandle(id).fetchHistory();
    const serveScheduled = new Set((history.events ?? []).filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'servePolicy').map((e) => String(e.eventId)));
    const attempts = (history.events ?? []).filter((e) => serveScheduled.has(String(e.activityTaskStartedEventAttributes?.scheduledEventId))).map((e) => e.activityTaskStartedEventAttributes?.attempt);
    expect(attempts).toEqual([2]); // a started event is recorded once the activity closes, with its last attempt
    // Every episode of the iteration reached the model: none was stored as a failure for want of a server.
    const store = await ArtifactStore.open({ root: join(dir, 'store') });
    const rollouts = await loadTrajectories(store, status.history.at(-1)?.refs.scored as string);
    expect(rollouts).toHaveLength(16);
    expect(rollouts.filter((t) => t.outcome.reason === 'error')).toEqual([]);
    expect(new Set(rollouts.map((t) => t.agent.name)).size).toBe(1);
    expect(servers()).toEqual([]);
  }, 300_000);

  python.it('kill -9 of the CPU worker mid-collection of 200 episodes: every planned episode is in the set once, and at most the shards\' concurrency ran twice', async () => {
    const id = 'durable-collect-crash';
    const episodes = 200;
    const shards = 2;
    const concurrency = 4;
    const { api, started } = await countingModel();
    try {
      const c = parsePipelineConfig(
        {
          name: 'collect-crash',
          env: 'gymflow/tool-use-v0',
          store: join(dir, 'store'),
          work_dir: join(dir, 'work'),
          policy: { init: { tiny: TINY_POLICY } },
          // The dead worker's shards are noticed 10 s after its last heartbeat (a shard heartbeats every 2.5 s meanwhile).
          collect: { agent: `openai:loopback@${api.url}/v1`, tasks: episodes, group_size: 1, shard_size: episodes / shards, concurrency, max_steps: 2, heartbeat_timeout: '10s' },
          export: { success_only: false },
          train: { command: 'sft', config: { max_steps: 1, max_length: 512 } },
          eval: { agent: 'expert', tasks: 2, baseline: false },
          max_iterations: 1,
        },
        'durability:collect-crash',
      );
      await stack.client.workflow.start(trainingLoop, { taskQueue: 'gymflow', workflowId: id, args: [c] });
      await until(`${id} to start 60 episodes`, 180_000, async () => (started() >= 60 ? true : undefined));
      const rollouts = await crashCpuWorkerAndFinish(id, () => {
        expect(started()).toBeLessThan(episodes - 2 * shards * concurrency); // the shards were far from done
      });
      // Every planned episode, once (group size 1: one episode per task), none failed for the crash.
      expect(rollouts).toHaveLength(episodes);
      expect(new Set(rollouts.map((t) => t.task.id)).size).toBe(episodes);
      expect(rollouts.filter((t) => t.outcome.reason === 'error')).toEqual([]);
      // Run twice: only the episodes in flight when the worker died (each shard's concurrency at most).
      expect(started() - episodes).toBeLessThanOrEqual(shards * concurrency);
      // The retried shards left no journal behind.
      expect(readdirSync(join(dir, 'store', 'journals'))).toEqual([]);
    } finally {
      await api.close();
    }
  }, 420_000);

  /**
   * One SFT iteration whose evaluation runs `episodes` episodes through `apiUrl` (task i is split[i mod 74] of the 74
   * held-out tasks); a dead worker's evaluation is noticed `heartbeatTimeout` after its last heartbeat.
   */
  const evaluationConfig = (name: string, apiUrl: string, episodes: number, concurrency: number, heartbeatTimeout = '10s'): PipelineConfig =>
    parsePipelineConfig(
      {
        name,
        env: 'gymflow/tool-use-v0',
        store: join(dir, 'store'),
        work_dir: join(dir, 'work'),
        policy: { init: { tiny: TINY_POLICY } },
        collect: { agent: 'expert', tasks: 2, group_size: 1, shard_size: 2 },
        export: { success_only: false },
        train: { command: 'sft', config: { max_steps: 1, max_length: 512 } },
        eval: { agent: `openai:loopback@${apiUrl}/v1`, tasks: episodes, concurrency, max_steps: 2, baseline: false, heartbeat_timeout: heartbeatTimeout },
        max_iterations: 1,
      },
      `durability:${name}`,
    );

  python.it('kill -9 of the CPU worker mid-evaluation of 200 episodes: the evaluation has every episode once, and at most its concurrency ran twice', async () => {
    const id = 'durable-eval-crash';
    const episodes = 200;
    const concurrency = 4;
    const { api, started } = await countingModel();
    try {
      const c = evaluationConfig('eval-crash', api.url, episodes, concurrency);
      await stack.client.workflow.start(trainingLoop, { taskQueue: 'gymflow', workflowId: id, args: [c] });
      await until(`${id} to start 60 evaluation episodes`, 240_000, async () => (started() >= 60 ? true : undefined));
      const status = await crashCpuWorkerAndWait(id, () => {
        expect(started()).toBeLessThan(episodes - 2 * concurrency); // the evaluation was far from done
      });
      const store = await ArtifactStore.open({ root: join(dir, 'store') });
      const result = parseEvalResult(await store.getJson(status.history.at(-1)?.refs.eval as string), 'eval');
      expect(result.episodes).toHaveLength(episodes);
      expect(new Set(result.episodes.map((e) => e.index)).size).toBe(episodes);
      expect(started() - episodes).toBeLessThanOrEqual(concurrency);
      expect(readdirSync(join(dir, 'store', 'journals'))).toEqual([]);
    } finally {
      await api.close();
    }
  }, 420_000);

  python.it('abort while the CPU worker is dead mid-evaluation: the run ends cancelled when the attempt times out, not failed', async () => {
    const id = 'durable-eval-abort-dead';
    const { api, started } = await countingModel();
    try {
      const handle = await stack.client.workflow.start(trainingLoop, { taskQueue: 'gymflow', workflowId: id, args: [evaluationConfig('eval-abort-dead', api.url, 200, 4, '30s')] });
      await until(`${id} to start 20 evaluation episodes`, 240_000, async () => (started() >= 20 ? true : undefined));
      // The worker running the evaluation dies, and a new one (which runs the workflow) takes the cancel within the 30 s
      // heartbeat timeout: no worker can report the dead attempt's cancellation, so it ends by timing out, not retried.
      await stack.cpu?.kill();
      await handle.signal(cancelSignal, { mode: 'abort', reason: 'durability test' });
      stack.cpu = await stack.startCpu();
      await handle.result();
      const status = await stack.statusOf(id);
      expect(status).toMatchObject({ state: 'cancelled', stopReason: 'cancelled', cancel: { mode: 'abort', stage: 'eval', activity: 'cancelled' } });
      expect(status.stages.eval).toMatchObject({ state: 'cancelled' });
      expect(status.stages.eval.note).toMatch(/^cancelled; its activity ended with: .*[Hh]eartbeat/);
    } finally {
      await api.close();
    }
  }, 420_000);

  docker.describe('with Docker sandboxes', () => {
    /** examples/sandbox.yaml as a user starts it, cut down: SFT on 12 expert episodes (2 shards), one step, expert eval. */
    const sandboxConfig = (name: string): PipelineConfig => {
      type Phase = { collect: Record<string, unknown>; train: { config: Record<string, unknown> } };
      const example = parseYaml(readFileSync(join(PACKAGE_ROOT, 'examples', 'sandbox.yaml'), 'utf8')) as Record<string, unknown> & {
        policy: { init: { tiny: Record<string, unknown> } };
        phases: Phase[];
      };
      const [sft] = example.phases;
      if (!sft) throw new Error('examples/sandbox.yaml: expected an sft phase');
      Object.assign(example.policy.init.tiny, TINY_POLICY, { bpe_vocab_size: 512 });
      Object.assign(sft.collect, { tasks: 12, shard_size: 6, concurrency: 2, heartbeat_timeout: '10s' });
      Object.assign(sft.train.config, { max_steps: 1, max_length: 1024, tensorboard_dir: join(dir, 'tb') });
      return parsePipelineConfig(
        { ...example, name, phases: [sft], eval: { agent: 'expert', tasks: 2, baseline: false }, max_iterations: 1, store: join(dir, 'store'), work_dir: join(dir, 'work') },
        'examples/sandbox.yaml',
      );
    };

    python.it('kill -9 of the CPU worker mid-shard: the retry removes its predecessor\'s containers and runs only the episodes it lacked; no container is left', async () => {
      const id = 'durable-sandbox-crash';
      await stack.client.workflow.start(trainingLoop, { taskQueue: 'gymflow', workflowId: id, args: [sandboxConfig('sandbox-crash')] });
      const atKill = await until(`${id} to run episodes in containers`, 180_000, async () => {
        const ids = await workflowContainers(id);
        return ids.length > 0 ? ids : undefined;
      });
      const rollouts = await crashCpuWorkerAndFinish(id);
      expect(rollouts).toHaveLength(12);
      expect(new Set(rollouts.map((t) => t.task.id)).size).toBe(12);
      expect(rollouts.every((t) => t.envId === 'gymflow/sandbox-v0' && t.outcome.success)).toBe(true);
      // The dead worker's containers went with the retry, and nothing else of the run is left.
      expect(atKill.length).toBeGreaterThan(0);
      expect(await workflowContainers(id)).toEqual([]);
    }, 420_000);

    python.it('cancel mid-shard leaves none of the run\'s containers', async () => {
      const id = 'durable-sandbox-cancel';
      const handle = await stack.client.workflow.start(trainingLoop, { taskQueue: 'gymflow', workflowId: id, args: [sandboxConfig('sandbox-cancel')] });
      await until(`${id} to run episodes in containers`, 180_000, async () => ((await workflowContainers(id)).length > 0 ? true : undefined));
      await handle.signal(cancelSignal, { mode: 'abort', reason: 'durability test' });
      await handle.result();
      expect(await stack.statusOf(id)).toMatchObject({ stopReason: 'cancelled', cancel: { mode: 'abort', stage: 'collect' } });
      expect(await workflowContainers(id)).toEqual([]);
    }, 300_000);
  });

  python.it('cancel (abort) while training leaves no trainer process behind', async () => {
    const id = 'durable-cancel';
    // A training far longer than the cancellation takes to reach it (the trainer's first checkpoint, read from
    // disk, says it is running: the status lags on an idle machine).
    const handle = await stack.client.workflow.start(trainingLoop, { taskQueue: 'gymflow', workflowId: id, args: [config('cancel', 100)] });
    await until(`${id} to checkpoint`, 120_000, () => Promise.resolve(newestCheckpoint(join(dir, 'work', 'runs', id), 2)));
    expect(trainerPids(dir).length).toBeGreaterThan(0);
    await handle.signal(cancelSignal, { mode: 'abort', reason: 'durability test' });
    await handle.result();
    const status = await stack.statusOf(id);
    expect(status).toMatchObject({ stopReason: 'cancelled', cancel: { mode: 'abort', stage: 'train', activity: 'cancelled' } });
    expect(trainerPids(dir)).toEqual([]);
  }, 150_000);
});
