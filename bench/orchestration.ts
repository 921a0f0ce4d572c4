/**
 * What Temporal costs the pipeline's collection: episodes per second of `gymflow/tool-use-v0` with the expert
 * agent (1,000 episodes by default) through the real stack — a Temporal dev server, a worker, a workflow
 * that fans the episodes out in shards (`bench/orchestration-workflow.ts`), once as `collectShard` activities
 * and, for `expert`, once as local activities (`collect.shard_execution: local`) — against the very same
 * activity functions called in a plain loop (in an activity context from `@temporalio/testing`'s
 * `MockActivityEnvironment`, so heartbeats work; no server).
 *
 * Both sides store every shard in a fresh artifact store, like the pipeline does. The worker runs in this
 * process, so both sides have the same single JS thread. Each side is warmed up first (the worker's
 * bundle, V8), then measured `--repeats` rounds (9 for `expert`, 3 for `tiny`), each in the order plain,
 * Temporal with activities, plain one by one, Temporal with local activities (`expert` only), so every
 * Temporal run follows a plain one (the server idle meanwhile, as it is between a pipeline's stages). The
 * median run of each is reported with the ratio Temporal / plain (target >= 0.9), and the median of the
 * per-round ratios (each Temporal run against the round's plain run in parallel), which is steadier on a
 * machine whose load drifts.
 *
 * The plain loop is measured twice: shards in parallel (the same episodes in flight as the workflow runs
 * them; the ratios the target is about) and shards one by one.
 *
 * Each round also runs each Temporal mode's workflow with the same shard inputs sent to an activity that
 * returns at once (`noopShard`): Temporal's own cost per run, with no work in it. Added to the plain loop's
 * time, it bounds the ratio this machine allows: `plain / (plain + own)`, printed beside the ratio.
 *
 * Two workloads (`--agent`):
 * - `expert` (default): the scripted expert, ~0.3 ms of work per episode — what Temporal adds per run
 *   (starting the workflow, dispatching and completing activities, ~0.1–0.2 s) is then most of the time;
 * - `tiny`: an untrained tiny model (hidden 64, 2 layers, byte-level, prompts without the system message;
 *   built and exported to ONNX by the trainer first)
 *   acting through `local:` as the loop's policy does, `--max-steps` turns of up to `--max-new-tokens`
 *   tokens each: milliseconds of real work per episode, the cost profile of the RL collection.
 *
 * Usage: `npm run bench:orchestration` or `npx tsx bench/orchestration.ts [--agent expert|tiny]
 * [--episodes N] [--shard-size K] [--repeats R] [--max-steps S] [--max-new-tokens T]`.
 * Prints a table and writes `bench/results/orchestration.json` (`orchestration-tiny.json` for `tiny`).
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { createRolloutActivities, type CollectShardInputSchema } from '../activities/rollouts.js';
import { formatTable } from '../src/cli/table.js';
import { make } from '../src/core/registry.js';
import { registerBuiltinEnvs } from '../src/envs/index.js';
import { planEpisodes } from '../src/hub/seeds.js';
import { freePort, startDevServer } from '../src/runtime/dev-server.js';
import { SEARCH_ATTRIBUTES } from '../src/loop/search-attributes.js';
import { collectBench, type CollectBenchInput } from './orchestration-workflow.js';
import { runBench, writeReport } from './report.js';
import { buildTinyModel } from './tiny-model.js';
import { defined } from '../src/core/defined.js';
import type { z } from 'zod';

/** One `collectShard` input, as the workflow passes it. */
type CollectShardInput = z.input<typeof CollectShardInputSchema>;

const ENV = 'gymflow/tool-use-v0';
/** The tiny model of `--agent tiny` (a `TinyModelConfig`). */
const TINY = { arch: 'llama', hidden_size: 64, intermediate_size: 128, num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 2, max_position_embeddings: 4096, system_prompt: 'drop', seed: 0 };

interface Run {
  seconds: number;
  episodes: number;
  successes: number;
}

/** What acts in every episode, and how. */
interface Workload {
  agent: string;
  maxSteps?: number;
  maxNewTokens?: number;
}

/** The `collectShard` inputs for `episodes` episodes in shards of `shardSize` tasks (group size 1). */
function shardInputs(episodes: number, shardSize: number, store: string, seed: number, work: Workload): CollectShardInput[] {
  const env = make(ENV);
  const tasks = env.listTasks?.('train');
  void env.close();
  const order = planEpisodes({ seed, tasks, shuffle: true, groupSize: 1, n: episodes }).map((p) => p.task?.id ?? '');
  const shards: CollectShardInput[] = [];
  for (let i = 0; i < order.length; i += shardSize) {
    shards.push({
      envId: ENV,
      policy: { iteration: 0 },
      collect: { agent: work.agent, group_size: 1, concurrency: 4, temperature: 0, ...defined({ max_steps: work.maxSteps, max_new_tokens: work.maxNewTokens }) },
      tasks: order.slice(i, i + shardSize),
      seed: seed + i,
      parents: [],
      store,
    });
  }
  return shards;
}

function median(runs: Run[]): Run {
  const sorted = [...runs].sort((a, b) => a.episodes / a.seconds - b.episodes / b.seconds);
  return sorted[Math.floor(sorted.length / 2)] as Run;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      agent: { type: 'string', default: 'expert' },
      episodes: { type: 'string', default: '1000' },
      'shard-size': { type: 'string', default: '250' },
      repeats: { type: 'string' },
      'max-steps': { type: 'string', default: '4' },
      'max-new-tokens': { type: 'string', default: '16' },
    },
  });
  const positive = (name: keyof typeof values, fallback?: string): number => {
    const text = values[name] ?? fallback;
    const n = Number(text);
    if (!Number.isSafeInteger(n) || n <= 0) throw new Error(`--${name}: expected a positive integer, got '${text}'`);
    return n;
  };
  if (values.agent !== 'expert' && values.agent !== 'tiny') throw new Error(`--agent: expected 'expert' or 'tiny', got '${values.agent}'`);
  const tiny = values.agent === 'tiny';
  const episodes = positive('episodes');
  const shardSize = positive('shard-size');
  const repeats = positive('repeats', tiny ? '3' : '9');
  const warmupEpisodes = tiny ? Math.min(episodes, 200) : 2000;
  registerBuiltinEnvs();
  Runtime.install({ logger: new DefaultLogger('WARN') });

  const scratch = await mkdtemp(path.join(os.tmpdir(), 'gymflow-bench-orch-'));
  const store = path.join(scratch, 'store');
  const work: Workload = tiny
    ? { agent: `local:${(await buildTinyModel(scratch, TINY)).onnx}`, maxSteps: positive('max-steps'), maxNewTokens: positive('max-new-tokens') }
    : { agent: 'expert' };
  const activities = createRolloutActivities({ store, workDir: path.join(scratch, 'work') });
  let seed = 1;

  // `parallel`: the shards at once, as the workflow runs them (the same episodes in flight); else one by one.
  const plain = async (n: number, parallel: boolean): Promise<Run> => {
    const shards = shardInputs(n, shardSize, store, seed++, work);
    const run = (shard: CollectShardInput): ReturnType<typeof activities.collectShard> => new MockActivityEnvironment().run(activities.collectShard, shard);
    const t0 = process.hrtime.bigint();
    const results: Awaited<ReturnType<typeof activities.collectShard>>[] = [];
    if (parallel) results.push(...(await Promise.all(shards.map(run))));
    else for (const shard of shards) results.push(await run(shard));
    return {
      seconds: Number(process.hrtime.bigint() - t0) / 1e9,
      episodes: results.reduce((a, r) => a + r.summary.episodes, 0),
      successes: results.reduce((a, r) => a + r.summary.successes, 0),
    };
  };

  const server = await startDevServer({ dbFilename: path.join(scratch, 'temporal.db'), port: await freePort(), headless: true, searchAttributes: SEARCH_ATTRIBUTES });
  const taskQueue = `bench-orchestration-${randomUUID()}`;
  const nativeConnection = await NativeConnection.connect({ address: server.address });
  const connection = await Connection.connect({ address: server.address });
  const client = new Client({ connection });
  try {
    const worker = await Worker.create({
      connection: nativeConnection,
      taskQueue,
      workflowsPath: fileURLToPath(new URL('./orchestration-workflow.ts', import.meta.url)),
      // `noopShard`: a shard that returns at once, for what the workflow costs with no work in it.
      activities: { ...activities, noopShard: () => Promise.resolve({ summary: { episodes: 0, successes: 0 }, ref: '' }) },
    });
    const temporal = async (n: number, execution: CollectBenchInput['execution'], noop = false): Promise<Run> => {
      const shards = shardInputs(n, shardSize, store, seed++, work);
      const t0 = process.hrtime.bigint();
      const r = await client.workflow.execute(collectBench, { taskQueue, workflowId: `bench-${randomUUID()}`, args: [{ shards, execution, noop }] });
      return { seconds: Number(process.hrtime.bigint() - t0) / 1e9, episodes: r.episodes, successes: r.successes };
    };

    const runs = await worker.runUntil(async () => {
      await plain(warmupEpisodes, true);
      await plain(warmupEpisodes, false);
      await temporal(warmupEpisodes, 'activity');
      if (!tiny) await temporal(warmupEpisodes, 'local');
      const r = { parallel: [] as Run[], sequential: [] as Run[], temporal: [] as Run[], temporalLocal: [] as Run[] };
      const noop = { temporal: [] as Run[], temporalLocal: [] as Run[] };
      for (let i = 0; i < repeats; i++) {
        r.parallel.push(await plain(episodes, true));
        r.temporal.push(await temporal(episodes, 'activity'));
        r.sequential.push(await plain(episodes, false));
        // Local activities are for shards of milliseconds: the tiny model's take tens of seconds (docs/operations.md §9).
        if (!tiny) r.temporalLocal.push(await temporal(episodes, 'local'));
        // Temporal's own cost. For the expert each run follows a plain one (not recorded), as the measured runs
        // do: on this VM a run after the server sat idle is slower (docs/operations.md §9). The tiny model's
        // plain runs take most of a minute, and Temporal's cost is lost in them anyway.
        if (!tiny) await plain(episodes, true);
        noop.temporal.push(await temporal(episodes, 'activity', true));
        if (!tiny) {
          await plain(episodes, true);
          noop.temporalLocal.push(await temporal(episodes, 'local', true));
        }
      }
      return { ...r, noop };
    });

    const { noop: noopRuns, ...measured } = runs;
    for (const r of Object.values(measured).flat()) {
      if (r.episodes !== episodes) throw new Error(`a run collected ${r.episodes} episodes, expected ${episodes}`);
    }
    const mpar = median(runs.parallel);
    const mseq = median(runs.sequential);
    const rate = (r: Run): number => r.episodes / r.seconds;
    const medianSeconds = (rs: Run[]): number => {
      const s = rs.map((r) => r.seconds).sort((a, b) => a - b);
      return s[Math.floor(s.length / 2)] as number;
    };
    /**
     * A Temporal mode's median run and its ratios to the plain loop; its own cost (the median seconds of the
     * workflow with no-op shards) and the ratio that cost allows if it adds to the plain loop's time.
     */
    const ratios = (temporalRuns: Run[], noop: Run[]) => {
      const mt = median(temporalRuns);
      const roundRatios = temporalRuns.map((t, i) => rate(t) / rate(runs.parallel[i] as Run)).sort((a, b) => a - b);
      const ownSeconds = medianSeconds(noop);
      return {
        median: mt,
        ratio: rate(mt) / rate(mpar),
        ratioSequential: rate(mt) / rate(mseq),
        ratioPerRound: roundRatios[Math.floor(roundRatios.length / 2)] as number,
        ownSeconds,
        ceiling: mpar.seconds / (mpar.seconds + ownSeconds),
      };
    };
    const activity = ratios(runs.temporal, noopRuns.temporal);
    const local = tiny ? undefined : ratios(runs.temporalLocal, noopRuns.temporalLocal);
    const shards = Math.ceil(episodes / shardSize);
    const row = (mode: string, r: Run) => ({ mode, episodes: r.episodes, shards, seconds: r.seconds, perSecond: rate(r), success: r.successes / r.episodes });
    const rows = [
      row('plain loop, shards in parallel', mpar),
      row('plain loop, shards one by one', mseq),
      row('Temporal, shards as activities', activity.median),
      ...(local ? [row('Temporal, shards as local activities', local.median)] : []),
    ];
    const agentLabel = tiny ? `untrained tiny model through local: (${work.maxSteps} turns x ${work.maxNewTokens} tokens at most)` : 'expert agent';
    console.log(`\n${ENV}, ${agentLabel}, ${episodes} episodes in ${shards} shards of ${shardSize}; median of ${repeats} runs each\n`);
    console.log(
      formatTable(rows, [
        { key: 'mode' },
        { key: 'episodes', align: 'right' },
        { key: 'shards', align: 'right' },
        { key: 'seconds', align: 'right' },
        { key: 'perSecond', header: 'episodes/s', align: 'right' },
        { key: 'success', align: 'right' },
      ]),
    );
    for (const [label, r] of [['activities', activity] as const, ...(local ? [['local activities', local] as const] : [])]) {
      console.log(`\nshards as ${label}: ratio Temporal / plain (shards in parallel, the same work in flight): ${r.ratio.toFixed(3)} (target >= 0.9)${r.ratio >= 0.9 ? '' : '  BELOW TARGET'}`);
      console.log(`  median of the per-round ratios (Temporal / plain in parallel): ${r.ratioPerRound.toFixed(3)}`);
      console.log(`  ratio Temporal / plain (shards one by one): ${r.ratioSequential.toFixed(3)}`);
      console.log(
        `  Temporal's own cost, the same workflow with shards that return at once: ${(1000 * r.ownSeconds).toFixed(1)} ms a run;` +
          ` added to the plain loop's ${(1000 * mpar.seconds).toFixed(1)} ms, it allows a ratio of at most ${r.ceiling.toFixed(3)}`,
      );
    }
    await writeReport(tiny ? 'orchestration-tiny' : 'orchestration', {
      env: ENV,
      agent: tiny ? { tiny: TINY, maxSteps: work.maxSteps, maxNewTokens: work.maxNewTokens } : 'expert',
      episodes,
      shardSize,
      repeats,
      results: rows,
      ratio: activity.ratio,
      ratioSequential: activity.ratioSequential,
      ratioPerRound: activity.ratioPerRound,
      ownSeconds: activity.ownSeconds,
      ceiling: activity.ceiling,
      ...(local ? { local: { ratio: local.ratio, ratioSequential: local.ratioSequential, ratioPerRound: local.ratioPerRound, ownSeconds: local.ownSeconds, ceiling: local.ceiling } } : {}),
      runs,
    });
  } finally {
    await connection.close();
    await nativeConnection.close();
    await server.stop();
    await rm(scratch, { recursive: true, force: true });
  }
}

runBench(main);
