/**
 * Asynchronous RL (`rl.async`) on the real stack: a Temporal dev server started here, the CPU and GPU workers as
 * child processes (so they can be `kill -9`ed), a tiny policy acting through onnxruntime-node and trained by the real
 * Python trainer.
 *
 * 1. The loop runs with the next iteration's collection beside each training: `pipeline_status` shows the train stage
 *    and the next iteration's collect stage running at once; every step records the policy version that chose it (the
 *    starting policy of the iteration before, one version behind the policy trained on it).
 * 2. `pause` holds both sides once their running activities finish, `resume` goes on, `cancel` with `abort` stops both.
 * 3. `kill -9` of the GPU worker mid-training while the next collection runs, then of the CPU worker (it runs the
 *    workflow and the shards) mid-collection: the loop completes; every iteration trained exactly once (the killed
 *    training resumed from its checkpoint, with the steps of an uninterrupted one) and every planned episode is in
 *    the set it trained on, once.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { parsePipelineConfig, type PipelineConfig } from '../src/loop/config.js';
import type { PipelineStatus } from '../src/loop/status.js';
import { loadTrajectories } from '../src/hub/store/trajectory-set.js';
import { ArtifactStore } from '../src/hub/store/store.js';
import { cancelSignal, pauseSignal, resumeSignal } from '../workflows/messages.js';
import { trainingLoop } from '../workflows/index.js';
import { processesMentioning } from './support/processes.js';
import { requires } from './support/requires.js';
import { until, WaitedInVain } from './support/until.js';
import { newestCheckpoint, WorkerStack } from './support/worker-stack.js';
import { TINY_POLICY } from './support/small-loop.js';

const temporal = requires.temporal();
const python = requires.python(['torch', 'gymflow_trainer']);

/** Episodes per iteration: 6 tasks × groups of 2 (a collection of seconds, so a kill can land in it). */
const EPISODES = 12;
/** Optimizer steps of every RL training. */
const STEPS = 12;

temporal.describe('asynchronous RL on a real dev server', () => {
  let stack: WorkerStack;
  let dir = '';

  /** Three RL iterations from a tiny policy, asynchronous; short heartbeat timeouts so a lost worker is noticed in seconds. */
  const config = (name: string, iterations = 3): PipelineConfig =>
    parsePipelineConfig(
      {
        name,
        env: 'gymflow/tool-use-v0',
        store: join(dir, 'store'),
        work_dir: join(dir, 'work'),
        seed: 3,
        policy: { init: { tiny: { ...TINY_POLICY, max_position_embeddings: 4096 } } },
        collect: { agent: 'policy', tasks: 6, group_size: 2, shard_size: 2, concurrency: 1, max_steps: 3, max_new_tokens: 32, heartbeat_timeout: '10s' },
        train: {
          command: 'rl',
          heartbeat_timeout: '15s',
          config: { max_steps: STEPS, save_every: 2, log_every: 1, max_length: 4096, rollout_correction: { level: 'token', mode: 'truncate', cap: 2 } },
        },
        eval: { agent: 'expert', tasks: 2, baseline: false },
        max_iterations: iterations,
        rl: { async: { max_staleness: 1 } },
      },
      `async:${name}`,
    );


  /** What every iteration of a finished loop trained on: its scored set's trajectories. */
  const checkIterations = async (status: PipelineStatus, iterations: number): Promise<void> => {
    expect(status.history.map((h) => h.iteration)).toEqual(Array.from({ length: iterations }, (_, i) => i + 1));
    const store = await ArtifactStore.open({ root: join(dir, 'store') });
    for (const h of status.history) {
      const ts = await loadTrajectories(store, h.refs.scored as string);
      // Every planned episode, once: the schedule positions of the shards' episodes are distinct within each shard.
      expect(ts, `iteration ${h.iteration}`).toHaveLength(EPISODES);
      const positions = new Set(ts.map((t) => JSON.stringify([t.metadata.collect, t.task.id])));
      expect(positions.size, `iteration ${h.iteration}: distinct episodes`).toBe(EPISODES);
      // Iteration 1 collected for itself with the initial policy; each later one beside the training before it,
      // with that training's starting policy: one version behind the policy it trains.
      const version = h.iteration === 1 ? 0 : h.iteration - 2;
      const versions = new Set(ts.flatMap((t) => t.steps.map((s) => s.policyVersion)));
      expect([...versions], `iteration ${h.iteration}: policy versions`).toEqual([version]);
      expect(h.staleness, `iteration ${h.iteration}`).toMatchObject({ max: h.iteration === 1 ? 0 : 1, dropped: 0 });
      if (h.iteration > 1) expect(h.staleness?.collectMs).toBeGreaterThan(0);
      expect(h.train?.steps).toBe(STEPS);
    }
  };

  beforeAll(async () => {
    stack = await WorkerStack.start('async');
    dir = stack.dir;
  }, 180_000);

  afterAll(async () => {
    const left = await stack?.stop();
    expect(left, 'trainer processes left behind').toEqual([]);
  }, 120_000);

  python.it('collects the next iteration beside the training, one policy version behind, and says so in pipeline_status', async () => {
    const id = 'async-plain';
    const handle = await stack.client.workflow.start(trainingLoop, { taskQueue: 'gymflow', workflowId: id, args: [config('plain')] });
    // Both stages at once: this iteration's training (GPU queue) and the next one's collection (CPU queue).
    const both = await until(`${id} to train and collect at once`, 240_000, async () => {
      const s = await stack.statusOf(id);
      if (s.state === 'failed' || s.state === 'completed') throw new WaitedInVain(`${id} ended (${s.state}) first: ${JSON.stringify(s.lastError)}`);
      return s.stages.train.state === 'running' && s.next?.stages.collect.state === 'running' ? s : undefined;
    });
    expect(both.next).toMatchObject({ iteration: both.iteration + 1, policyVersion: both.iteration - 1 });
    await handle.result();
    const status = await stack.statusOf(id);
    expect(status).toMatchObject({ state: 'completed', stopReason: 'max_iterations', run: 3 });
    await checkIterations(status, 3);
    const train = await stack.trainResults(id);
    expect(train.map((t) => [t.attempt, t.resumedFrom])).toEqual([
      [1, null],
      [1, null],
      [1, null],
    ]);
  }, 600_000);

  python.it('pause holds both sides at their next stage; cancel with abort stops both and leaves no trainer', async () => {
    const id = 'async-cancel';
    const handle = await stack.client.workflow.start(trainingLoop, { taskQueue: 'gymflow', workflowId: id, args: [config('cancel')] });
    await until(`${id} to train and collect at once`, 240_000, async () => {
      const s = await stack.statusOf(id);
      return s.stages.train.state === 'running' && s.next?.stages.collect.state === 'running' ? true : undefined;
    });
    await handle.signal(pauseSignal);
    // The running activities finish; neither side starts another: the pass stops before its policy export.
    const paused = await until(`${id} to hold`, 240_000, async () => {
      const s = await stack.statusOf(id);
      return s.stages.train.state === 'done' && s.next?.stages.collect.state === 'done' ? s : undefined;
    });
    await new Promise((r) => setTimeout(r, 3000));
    const held = await stack.statusOf(id);
    expect(held).toMatchObject({ state: 'paused', iteration: paused.iteration });
    expect(held.stages.policy.state).toBe('pending');
    await handle.signal(resumeSignal);
    await until(`${id} to train again`, 240_000, async () => {
      const s = await stack.statusOf(id);
      return s.iteration === paused.iteration + 1 && s.stages.train.state === 'running' ? true : undefined;
    });
    await handle.signal(cancelSignal, { mode: 'abort', reason: 'test' });
    const result = await handle.result();
    expect(result.stopReason).toBe('cancelled');
    const status = await stack.statusOf(id);
    expect(status).toMatchObject({ state: 'cancelled', cancel: { mode: 'abort', activity: 'cancelled', stage: 'train' } });
    await until('the cancelled trainer to exit', 30_000, async () => (processesMentioning('gymflow_trainer', join(dir, 'work', 'runs', id)).length === 0 ? true : undefined));
  }, 600_000);

  python.it('kill -9 of the GPU worker mid-training and of the CPU worker mid-collection: nothing lost, nothing trained twice', async () => {
    const id = 'async-kills';
    // Four iterations: an overlapped collection (of iteration 2, 3 or 4) is left for the CPU worker's kill after the GPU worker's.
    const handle = await stack.client.workflow.start(trainingLoop, { taskQueue: 'gymflow', workflowId: id, args: [config('kills', 4)] });
    // The GPU worker, once a training with a collection beside it (iteration 1 or 2) has written a checkpoint past step 2.
    await until(`${id} to checkpoint beside a collection`, 300_000, async () => {
      const s = await stack.statusOf(id);
      if (s.state === 'failed' || s.state === 'completed') throw new WaitedInVain(`${id} ended (${s.state}) first: ${JSON.stringify(s.lastError)}`);
      return s.stages.train.state === 'running' && s.next !== undefined && newestCheckpoint(join(dir, 'work', 'runs', id), 2) !== undefined ? true : undefined;
    });
    await stack.gpu?.kill();
    await until('the orphaned trainer to exit', 15_000, async () => (processesMentioning('gymflow_trainer', join(dir, 'work', 'runs', id)).length === 0 ? true : undefined));
    stack.gpu = await stack.startGpu();
    // The CPU worker (the workflow's and the shards'), once an overlapped collection has finished an episode. The
    // pass beside it may be training, exporting the policy (both on the GPU queue) or done and waiting for the
    // collection; not evaluating, on the CPU worker with 5 minutes of heartbeat timeout. (A training that ends before
    // the collection's first episode, as on a fast machine, leaves no window inside the training alone.)
    const seen = new Set<string>(); // what the probe saw, for the message when the window is missed
    await until(`${id} to collect beside the pass`, 300_000, async () => {
      const s = await stack.statusOf(id);
      const c = s.next?.stages.collect;
      const done = c?.progress?.done ?? 0;
      seen.add(`${s.iteration}: train ${s.stages.train.state}, eval ${s.stages.eval.state}, next collect ${c?.state ?? '-'} ${done}`);
      if (s.state === 'failed' || s.state === 'completed') throw new WaitedInVain(`${id} ended (${s.state}) first: ${JSON.stringify(s.lastError)}; seen ${[...seen].join('; ')}`);
      return s.stages.eval.state !== 'running' && c?.state === 'running' && done >= 1 && done < EPISODES ? true : undefined;
    });
    await stack.cpu?.kill();
    stack.cpu = await stack.startCpu();

    await handle.result();
    const status = await stack.statusOf(id);
    expect(status).toMatchObject({ state: 'completed', stopReason: 'max_iterations', run: 4 });
    await checkIterations(status, 4);
    // One training per iteration; the one killed was retried once and resumed from a checkpoint.
    const train = await stack.trainResults(id);
    expect(train.map((t) => t.steps)).toEqual([STEPS, STEPS, STEPS, STEPS]);
    const retried = train.filter((t) => t.attempt > 1);
    expect(retried).toHaveLength(1);
    expect(retried[0]?.resumedFrom).toEqual(expect.stringMatching(/checkpoint-\d+$/));
  }, 900_000);
});
