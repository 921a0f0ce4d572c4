/**
 * Rollout and export throughput: episodes per second of `collect()` for `gymflow/tool-use-v0` with the
 * expert agent at concurrency 1, 8 and 64 (in memory, and at 8 with the set written to a fresh artifact
 * store), then SFT export throughput (trajectories per second, with and without per-record schema
 * validation), and trajectory-set write/read throughput of the store on distinct (random-agent)
 * trajectories, where every behaviour is a new fsynced object. Each configuration is warmed up first (V8 needs a few thousand episodes before the
 * numbers settle), then run REPEATS times for at least MIN_SECONDS each; the median run is reported.
 * Prints a table and writes `bench/results/collect.json`.
 *
 * The environment is CPU-bound and in-process, so concurrency cannot add throughput here (one JS thread);
 * it pays off when episodes wait on I/O (model servers, sandboxes). The numbers show its overhead.
 *
 * Usage: `npx tsx bench/collect.ts`.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { runBench, writeReport } from './report.js';
import { formatTable } from '../src/cli/table.js';
import { registryToolLookup } from '../src/core/chat/tool-lookup.js';
import type { Trajectory } from '../src/core/trajectory.js';
import { registerBuiltinEnvs } from '../src/envs/index.js';
import { collect } from '../src/hub/collect.js';
import { resolveAgent } from '../src/policy/specs.js';
import { exportDataset } from '../src/hub/export/export.js';
import { ArtifactStore } from '../src/hub/store/store.js';
import { loadTrajectories, putTrajectories } from '../src/hub/store/trajectory-set.js';

const ENV = 'gymflow/tool-use-v0';
const MIN_SECONDS = 2.5;
const REPEATS = 3;
const WARMUP_EPISODES = 6000;
const CONCURRENCY = [1, 8, 64];

interface Row {
  bench: string;
  concurrency: number | null;
  items: number;
  seconds: number;
  perSecond: number;
  unit: string;
  successRate: number | null;
}

async function timeCollect(concurrency: number, n: number, store?: ArtifactStore): Promise<{ seconds: number; episodes: number; success: number; trajectories: Trajectory[] }> {
  const t0 = process.hrtime.bigint();
  const r = await collect({ resolveAgent, envId: ENV, agent: 'expert', n, concurrency, seed: 1, ...(store ? { store, name: `bench/c${concurrency}` } : {}) });
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  return { seconds, episodes: r.summary.episodes, success: r.summary.successRate, trajectories: r.trajectories };
}

async function runOnce(concurrency: number, n: number, withStore: boolean): Promise<Awaited<ReturnType<typeof timeCollect>>> {
  const root = withStore ? await mkdtemp(path.join(os.tmpdir(), 'gymflow-bench-store-')) : undefined;
  try {
    return await timeCollect(concurrency, n, root ? await ArtifactStore.open({ root }) : undefined);
  } finally {
    if (root) await rm(root, { recursive: true, force: true });
  }
}

/** Warms up, sizes n so a run lasts at least MIN_SECONDS, and reports the median of REPEATS runs. */
async function measureCollect(concurrency: number, withStore: boolean): Promise<Row & { trajectories: Trajectory[] }> {
  const warm = await runOnce(concurrency, WARMUP_EPISODES, withStore);
  let n = Math.ceil((WARMUP_EPISODES * MIN_SECONDS * 1.3) / Math.max(warm.seconds, 0.05));
  const runs: Awaited<ReturnType<typeof timeCollect>>[] = [];
  while (runs.length < REPEATS) {
    const r = await runOnce(concurrency, n, withStore);
    if (r.seconds < MIN_SECONDS) {
      n = Math.ceil((n * MIN_SECONDS * 1.3) / Math.max(r.seconds, 0.05));
      continue;
    }
    runs.push(r);
  }
  runs.sort((a, b) => a.episodes / a.seconds - b.episodes / b.seconds);
  const r = runs[Math.floor(runs.length / 2)] as (typeof runs)[number];
  return {
    bench: withStore ? 'collect + store' : 'collect',
    concurrency,
    items: r.episodes,
    seconds: r.seconds,
    perSecond: r.episodes / r.seconds,
    unit: 'episodes/s',
    successRate: r.success,
    trajectories: r.trajectories,
  };
}

async function measureExport(trajectories: readonly Trajectory[], validate: boolean): Promise<Row> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'gymflow-bench-export-'));
  const tools = registryToolLookup();
  let items = 0;
  let runs = 0;
  for (let i = 0; i < 2; i++) await exportDataset({ format: 'sft', trajectories, out: path.join(dir, `warm-${i}.jsonl`), tools, validate });
  const t0 = process.hrtime.bigint();
  let seconds = 0;
  while (seconds < MIN_SECONDS) {
    await exportDataset({ format: 'sft', trajectories, out: path.join(dir, `sft-${runs++}.jsonl`), tools, validate });
    items += trajectories.length;
    seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  }
  await rm(dir, { recursive: true, force: true });
  return { bench: validate ? 'export sft' : 'export sft (no validation)', concurrency: null, items, seconds, perSecond: items / seconds, unit: 'trajectories/s', successRate: null };
}

/** Stores distinct trajectories as a set (one fsynced object each) and reads them back. */
async function measureStore(): Promise<Row[]> {
  const { trajectories } = await collect({ resolveAgent, envId: ENV, agent: 'random', n: 4000, concurrency: 4, seed: 1, maxSteps: 8 });
  const root = await mkdtemp(path.join(os.tmpdir(), 'gymflow-bench-store-'));
  try {
    const store = await ArtifactStore.open({ root });
    let t0 = process.hrtime.bigint();
    const entry = await putTrajectories(store, trajectories, { name: 'bench' });
    const put = Number(process.hrtime.bigint() - t0) / 1e9;
    t0 = process.hrtime.bigint();
    const back = await loadTrajectories(store, entry.ref);
    const read = Number(process.hrtime.bigint() - t0) / 1e9;
    const unique = Number(entry.meta?.unique ?? 0);
    return [
      { bench: `store put (${unique} distinct)`, concurrency: null, items: trajectories.length, seconds: put, perSecond: trajectories.length / put, unit: 'trajectories/s', successRate: null },
      { bench: 'store read + validate', concurrency: null, items: back.length, seconds: read, perSecond: back.length / read, unit: 'trajectories/s', successRate: null },
    ];
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  registerBuiltinEnvs();
  const rows: Row[] = [];
  let sample: Trajectory[] = [];
  for (const c of CONCURRENCY) {
    const { trajectories, ...row } = await measureCollect(c, false);
    rows.push(row);
    if (c === 8) sample = trajectories;
  }
  const { trajectories: _t, ...stored } = await measureCollect(8, true);
  rows.push(stored);
  const exportSet = sample.slice(0, 5000);
  rows.push(await measureExport(exportSet, true));
  rows.push(await measureExport(exportSet, false));
  rows.push(...(await measureStore()));

  console.log(
    formatTable(
      rows.map((r) => ({ ...r, perSecond: Math.round(r.perSecond), seconds: Number(r.seconds.toFixed(2)), concurrency: r.concurrency ?? '', successRate: r.successRate ?? '' })),
      [
        { key: 'bench' },
        { key: 'concurrency', align: 'right' },
        { key: 'items', align: 'right' },
        { key: 'seconds', align: 'right' },
        { key: 'perSecond', header: 'per second', align: 'right' },
        { key: 'unit' },
        { key: 'successRate', header: 'success', align: 'right' },
      ],
    ),
  );
  await writeReport('collect', {
    env: ENV,
    agent: 'expert',
    minSeconds: MIN_SECONDS,
    repeats: REPEATS,
    warmupEpisodes: WARMUP_EPISODES,
    exportTrajectories: exportSet.length,
    results: rows,
  });
}

runBench(main);
