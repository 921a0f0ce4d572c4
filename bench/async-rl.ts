/**
 * Asynchronous RL against the synchronous loop (docs/pipeline.md, "Asynchronous RL"): the same RL loop — the same
 * starting checkpoint, tasks, seeds and evaluation — run once synchronously and once with `rl.async`, through the
 * real stack: a Temporal dev server, a CPU and a GPU worker as child processes, the policy acting through
 * onnxruntime-node and the real Python trainer (on the GPU worker's device: the CPU on a machine without one).
 *
 * 1. The starting checkpoint: one SFT iteration on expert rollouts (a loop of its own, the demo's tiny-model recipe
 *    with fewer epochs, so RL starts from a policy that succeeds sometimes), checked out of the store.
 * 2. Sync, then async: `--iterations` RL iterations each from that checkpoint (`policy.init.path`), evaluated every
 *    iteration with the policy on `--eval-tasks` held-out tasks (greedy; the same episode seeds in both runs).
 * 3. Per iteration: wall clock and each stage's busy time. The CPU side's `collect` is the collection that ran within
 *    the iteration's wall (for async: its own, if it collected for itself, plus the next iteration's, beside the
 *    training); `train` is the trainer's. For each async iteration that collected the next one beside its training,
 *    the overlap ratio wall / max(collect, train) (target ≤ 1.15), and `chain_ratio`, the same against the whole chain
 *    that waits for the training (train → ONNX export of the policy → evaluation). The final held-out success of each run and an
 *    exact McNemar test over the paired episodes (same task, same seed; target: not significant at 0.05).
 *
 * In the RL runs each worker gets one core's worth of threads (the trainer `OMP_NUM_THREADS=1`, the collection one
 * shard of one episode at a time, onnxruntime one intra-op thread, the evaluation one episode at a time), so that on a
 * 2-core machine the "GPU" side and the CPU side do not take each other's core; other work on the machine still does.
 * The SFT of the starting checkpoint runs before them with every core.
 *
 * Usage: `npm run bench:async-rl` or `npx tsx bench/async-rl.ts [--iterations N] [--tasks T] [--group-size G]
 * [--eval-tasks E] [--sft-epochs S] [--max-staleness K]`. Prints a table and writes `bench/results/async-rl.json`.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { formatTable } from '../src/cli/table.js';
import { parseEvalResult } from '../src/eval/result.js';
import { parsePipelineConfig, type PipelineConfig } from '../src/loop/config.js';
import { SEARCH_ATTRIBUTES } from '../src/loop/search-attributes.js';
import type { IterationMetrics } from '../src/loop/status.js';
import { checkoutTree } from '../src/hub/store/tree.js';
import { ArtifactStore } from '../src/hub/store/store.js';
import { freePort, startDevServer, startWorkerProcess, type DevServer, type WorkerProcess } from '../src/runtime/dev-server.js';
import { trainingLoop } from '../workflows/index.js';
import { runBench, writeReport } from './report.js';

const { values: args } = parseArgs({
  options: {
    iterations: { type: 'string', default: '3' },
    tasks: { type: 'string', default: '8' },
    'group-size': { type: 'string', default: '4' },
    'eval-tasks': { type: 'string', default: '74' },
    'sft-epochs': { type: 'string', default: '2' },
    'max-staleness': { type: 'string', default: '1' },
  },
});
const ITERATIONS = Number(args.iterations);
const TASKS = Number(args.tasks);
const GROUP = Number(args['group-size']);
const EVAL_TASKS = Number(args['eval-tasks']);
const SFT_EPOCHS = Number(args['sft-epochs']);
const MAX_STALENESS = Number(args['max-staleness']);

/** The demo's tiny model (examples/demo.yaml). */
const TINY = {
  arch: 'llama',
  hidden_size: 192,
  intermediate_size: 512,
  num_hidden_layers: 3,
  num_attention_heads: 4,
  num_key_value_heads: 2,
  max_position_embeddings: 4096,
  bpe_vocab_size: 4096,
  bpe_split_digits: true,
  system_prompt: 'drop',
  seed: 0,
};

/** The evaluation of every loop here: greedy, one episode at a time, the same seeds. */
const EVAL = { split: 'heldout', tasks: EVAL_TASKS, repeats: 1, temperature: 0, max_new_tokens: 96, max_steps: 8, baseline: false, concurrency: 1, seed: 0 };

/** Exact two-sided McNemar test on the discordant pairs (b: first only succeeded, c: second only): the binomial tail. */
export function exactMcNemar(b: number, c: number): number {
  const n = b + c;
  if (n === 0) return 1;
  const k = Math.min(b, c);
  // P(X ≤ k), X ~ Binomial(n, 1/2), summed in log space.
  let logC = 0;
  let tail = 0;
  for (let i = 0; i <= k; i++) {
    if (i > 0) logC += Math.log(n - i + 1) - Math.log(i);
    tail += Math.exp(logC - n * Math.LN2);
  }
  return Math.min(1, 2 * tail);
}

interface Run {
  mode: 'sync' | 'async';
  id: string;
  wallMs: number;
  history: IterationMetrics[];
}

async function main(): Promise<void> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'gymflow-bench-async-'));
  const store = path.join(dir, 'store');
  let server: DevServer | undefined;
  let cpu: WorkerProcess | undefined;
  let gpu: WorkerProcess | undefined;
  let connection: Connection | undefined;
  try {
    server = await startDevServer({ dbFilename: path.join(dir, 'temporal.db'), port: await freePort(), headless: true, searchAttributes: SEARCH_ATTRIBUTES, logFile: path.join(dir, 'temporal.log') });
    const address = server.address;
    // The SFT of the starting checkpoint takes every core; the RL runs' GPU worker is pinned to one (see above).
    const startGpu = (pinned: boolean): Promise<WorkerProcess> =>
      startWorkerProcess({ kind: 'gpu', address, store, logFile: path.join(dir, 'gpu.log'), ...(pinned ? { env: { ...process.env, OMP_NUM_THREADS: '1', MKL_NUM_THREADS: '1' } } : {}) });
    [cpu, gpu] = await Promise.all([startWorkerProcess({ kind: 'cpu', address, store, logFile: path.join(dir, 'cpu.log') }), startGpu(false)]);
    connection = await Connection.connect({ address });
    const client = new Client({ connection });
    const run = async (config: PipelineConfig): Promise<{ history: IterationMetrics[]; wallMs: number; checkpoint?: string }> => {
      const started = Date.now();
      const result = await client.workflow.execute(trainingLoop, { taskQueue: 'gymflow', workflowId: `${config.name}-${Date.now()}`, args: [config] });
      return { history: result.history, wallMs: Date.now() - started, ...(result.policy.checkpointRef ? { checkpoint: result.policy.checkpointRef } : {}) };
    };
    const common = { env: 'gymflow/tool-use-v0', store, work_dir: path.join(dir, 'work'), seed: 0 };

    // 1. The starting checkpoint.
    console.log(`SFT of the starting checkpoint (${SFT_EPOCHS} epochs on every training task's expert episode)…`);
    const sft = await run(
      parsePipelineConfig(
        {
          ...common,
          name: 'bench-async-sft',
          policy: { init: { tokenizer_corpus: 'expert', tiny: TINY } },
          collect: { agent: 'expert', tasks: 1527, shard_size: 64, shard_execution: 'local', concurrency: 4, max_steps: 8 },
          export: { success_only: true },
          train: {
            command: 'sft',
            config: { epochs: SFT_EPOCHS, max_length: 768, log_every: 20, batch_size: 8, packing: true, mask_observations: true, optim: { lr: 0.002, warmup_steps: 20, scheduler: 'cosine', weight_decay: 0.1 } },
          },
          eval: { agent: 'expert', tasks: 2, baseline: false },
          max_iterations: 1,
        },
        'bench:sft',
      ),
    );
    const start = path.join(dir, 'start');
    await checkoutTree(await ArtifactStore.open({ root: store }), sft.checkpoint as string, start);
    console.log(`  ${(sft.wallMs / 1000).toFixed(0)} s; checkpoint ${sft.checkpoint?.slice(0, 19)}`);

    await gpu.stop(20_000);
    gpu = await startGpu(true);

    // 2. The same RL loop, sync then async.
    const rlConfig = (mode: 'sync' | 'async'): PipelineConfig =>
      parsePipelineConfig(
        {
          ...common,
          name: `bench-async-${mode}`,
          policy: { init: { path: start } },
          collect: { agent: 'policy', tasks: TASKS, group_size: GROUP, shard_size: TASKS, concurrency: 1, max_steps: 8, temperature: 1, max_new_tokens: 96 },
          train: {
            command: 'rl',
            config: {
              epochs: 1,
              max_length: 1536,
              log_every: 5,
              batch_size: 8,
              loss: { algorithm: 'grpo', eps: 0.2 },
              drop_uniform_groups: true,
              // The correction covers the engine's gap and, asynchronously, the one version of staleness.
              rollout_correction: { level: 'token', mode: 'truncate', cap: 2 },
              optim: { lr: 0.0001, carry_state: true },
            },
          },
          eval: EVAL,
          max_iterations: ITERATIONS,
          ...(mode === 'async' ? { rl: { async: { max_staleness: MAX_STALENESS } } } : {}),
        },
        `bench:${mode}`,
      );
    const runs: Run[] = [];
    for (const mode of ['sync', 'async'] as const) {
      console.log(`${mode}: ${ITERATIONS} RL iterations…`);
      const r = await run(rlConfig(mode));
      runs.push({ mode, id: `bench-async-${mode}`, wallMs: r.wallMs, history: r.history });
      console.log(`  ${(r.wallMs / 1000).toFixed(0)} s`);
    }

    // 3. The numbers.
    const s = (ms: number | undefined): number => Number(((ms ?? 0) / 1000).toFixed(1));
    const rows = runs.flatMap((r) =>
      r.history.map((h, i) => {
        const next = r.history[i + 1];
        const own = h.staleness?.collectMs === undefined ? (h.stageMs?.tasks ?? 0) + (h.stageMs?.collect ?? 0) : 0;
        const beside = r.mode === 'async' ? (next?.staleness?.collectMs ?? 0) : 0;
        const collect = own + beside;
        const train = h.stageMs?.train ?? 0;
        const overlapped = beside > 0;
        return {
          mode: r.mode,
          iteration: h.iteration,
          wall_s: s(h.wallMs),
          collect_s: s(collect),
          train_s: s(train),
          policy_s: s(h.stageMs?.policy),
          eval_s: s(h.stageMs?.eval),
          reward_export_s: s((h.stageMs?.reward ?? 0) + (h.stageMs?.export ?? 0)),
          staleness: h.staleness?.max ?? '',
          // The gap between the recorded log-probs and the trainer's at its last step: the engine's and this training's
          // updates, plus one training's drift for a batch collected beside the previous training.
          mismatch_kl: h.train?.mismatchKl === undefined || h.train.mismatchKl === null ? '' : Number(h.train.mismatchKl.toPrecision(2)),
          ratio: overlapped ? Number((h.wallMs / Math.max(beside, train)).toFixed(2)) : '',
          // Against the whole chain that waits for the training (train → policy export → eval) instead of the training alone.
          chain_ratio: overlapped ? Number((h.wallMs / Math.max(beside, train + (h.stageMs?.policy ?? 0) + (h.stageMs?.eval ?? 0))).toFixed(2)) : '',
          success: h.success ? Number(h.success.value.toFixed(3)) : 0,
        };
      }),
    );
    console.log('');
    console.log(
      formatTable(rows, [
        { key: 'mode' },
        { key: 'iteration', align: 'right' },
        { key: 'wall_s', align: 'right' },
        { key: 'collect_s', align: 'right' },
        { key: 'train_s', align: 'right' },
        { key: 'policy_s', align: 'right' },
        { key: 'eval_s', align: 'right' },
        { key: 'reward_export_s', align: 'right' },
        { key: 'staleness', align: 'right' },
        { key: 'mismatch_kl', align: 'right' },
        { key: 'ratio', align: 'right' },
        { key: 'chain_ratio', align: 'right' },
        { key: 'success', align: 'right' },
      ]),
    );

    const storeHandle = await ArtifactStore.open({ root: store });
    const finalEval = async (r: Run): Promise<Map<string, boolean>> => {
      const ref = r.history.at(-1)?.refs.eval as string;
      const result = parseEvalResult(await storeHandle.getJson(ref), ref);
      return new Map(result.episodes.map((e) => [`${e.taskId}#${e.seed}`, e.success]));
    };
    const [syncEval, asyncEval] = await Promise.all(runs.map(finalEval)) as [Map<string, boolean>, Map<string, boolean>];
    let b = 0;
    let c = 0;
    let paired = 0;
    for (const [key, ok] of syncEval) {
      const other = asyncEval.get(key);
      if (other === undefined) continue;
      paired++;
      if (ok && !other) b++;
      if (!ok && other) c++;
    }
    const p = exactMcNemar(b, c);
    const mean = (xs: number[]): number => (xs.length === 0 ? NaN : xs.reduce((x, y) => x + y, 0) / xs.length);
    const meanWall = (mode: string): number => mean(rows.filter((r) => r.mode === mode).map((r) => r.wall_s));
    const ratios = rows.filter((r) => r.mode === 'async' && r.ratio !== '').map((r) => r.ratio as number);
    const syncSuccess = runs[0]?.history.at(-1)?.success?.value ?? 0;
    const asyncSuccess = runs[1]?.history.at(-1)?.success?.value ?? 0;
    console.log('');
    console.log(`mean wall per iteration: sync ${meanWall('sync').toFixed(1)} s, async ${meanWall('async').toFixed(1)} s (speed-up ${(meanWall('sync') / meanWall('async')).toFixed(2)}x)`);
    console.log(`async overlap ratio wall / max(collect, train), iterations that collected the next beside training: ${ratios.join(', ') || 'none'} (target <= 1.15)`);
    console.log(`final held-out success: sync ${syncSuccess.toFixed(3)}, async ${asyncSuccess.toFixed(3)} over ${paired} paired episodes; discordant ${b} (sync only) / ${c} (async only), exact McNemar p = ${p.toFixed(3)} (target: p >= 0.05)`);

    await writeReport('async-rl', {
      config: { iterations: ITERATIONS, tasks: TASKS, groupSize: GROUP, evalTasks: EVAL_TASKS, sftEpochs: SFT_EPOCHS, maxStaleness: MAX_STALENESS },
      sftWallMs: sft.wallMs,
      runs: runs.map((r) => ({ mode: r.mode, wallMs: r.wallMs, history: r.history })),
      rows,
      meanWallS: { sync: meanWall('sync'), async: meanWall('async') },
      overlapRatios: ratios,
      finalSuccess: { sync: syncSuccess, async: asyncSuccess, paired, discordant: { syncOnly: b, asyncOnly: c }, mcnemarP: p },
    });
  } finally {
    await connection?.close();
    await Promise.all([cpu?.stop(20_000), gpu?.stop(20_000)]);
    await server?.stop();
    if (!process.env['GYMFLOW_KEEP_BENCH_DIR']) await rm(dir, { recursive: true, force: true });
    else console.warn(`kept ${dir}`);
  }
}

runBench(main);
