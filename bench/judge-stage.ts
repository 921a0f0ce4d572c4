/**
 * The Reward stage's judge (`judgeRollouts`, the pipeline's activity, run through the SDK's activity environment)
 * against the loopback Anthropic server answering every call after a fixed latency, at 1, 8 and 32 concurrent
 * calls: steps judged per second and the peak of calls in flight the server saw. Each run judges the same synthetic
 * trajectories in a fresh store, so no verdict comes from the cache.
 *
 * Prints a table and writes `bench/results/judge-stage.json`. Usage:
 * `npm run bench:judge-stage -- [--latency-ms 50] [--steps 192]`.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createRewardActivities, type JudgeRolloutsResult } from '../activities/reward.js';
import { registerBuiltinEnvs } from '../src/envs/register.js';
import { trajectoryId } from '../src/core/trajectory.js';
import { putTrajectories } from '../src/hub/store/trajectory-set.js';
import { RewardSectionSchema } from '../src/loop/config.js';
import { anthropicToolUse, LoopbackApi, verdict } from '../src/reward/judge/__fixtures__/loopback-api.js';
import { openWorkspace } from '../src/runtime/workspace.js';
import { syntheticTrajectory } from './synthetic-trajectories.js';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(name);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

async function main(): Promise<void> {
  const latencyMs = arg('--latency-ms', 50);
  const steps = arg('--steps', 192);
  registerBuiltinEnvs();
  process.env['ANTHROPIC_API_KEY'] ??= 'bench-key';
  const api = await LoopbackApi.start((req) => {
    const names = (req.body as { tools: { input_schema: { required: string[] } }[] }).tools[0]?.input_schema.required ?? [];
    return { delayMs: latencyMs, body: anthropicToolUse(verdict(names, 0.7)) };
  });
  const rows: { concurrency: number; steps: number; seconds: number; stepsPerSecond: number; peakInFlight: number; ideal: number }[] = [];
  const root = await mkdtemp(path.join(tmpdir(), 'gymflow-bench-judge-'));
  try {
    const length = 8;
    // syntheticTrajectory gives every trajectory one fixed id (generation stays cheap for the file benches); the
    // judge stage keys its verdicts by trajectory id, so each gets its real id here.
    const trajectories = Array.from({ length: Math.ceil(steps / length) }, (_, i) => {
      const t = syntheticTrajectory(length, 7000 + i);
      return { ...t, id: trajectoryId(t) };
    });
    for (const concurrency of [1, 8, 32]) {
      const where = { store: path.join(root, `store-${concurrency}`), workDir: path.join(root, `work-${concurrency}`) };
      const ws = await openWorkspace(where, {});
      const shard = await putTrajectories(ws.store, trajectories, { kind: 'trajectories' });
      const reward = RewardSectionSchema.parse({ profile: 'coding', judge: { provider: 'anthropic', model: 'claude-bench', base_url: api.url, concurrency } });
      const activities = createRewardActivities(where);
      api.maxInFlight = 0;
      const started = performance.now();
      const result: JudgeRolloutsResult = await new MockActivityEnvironment().run(activities.judgeRollouts, { envId: 'gymflow/tool-use-v0', shards: [shard.ref], reward, ...where });
      const seconds = (performance.now() - started) / 1000;
      if (result.judged !== result.steps) throw new Error(`judged ${result.judged} of ${result.steps} steps`);
      rows.push({ concurrency, steps: result.judged, seconds, stepsPerSecond: result.judged / seconds, peakInFlight: api.maxInFlight, ideal: (1000 / latencyMs) * concurrency });
    }
  } finally {
    await api.close();
    await rm(root, { recursive: true, force: true });
  }
  console.log(`judgeRollouts against the loopback Anthropic server, ${latencyMs} ms per call, ${rows[0]?.steps ?? 0} steps (3 rubrics per call)`);
  console.log('concurrency  steps  seconds  steps/s  peak in flight  ideal steps/s');
  for (const r of rows) {
    console.log(`${String(r.concurrency).padStart(11)}  ${String(r.steps).padStart(5)}  ${r.seconds.toFixed(2).padStart(7)}  ${r.stepsPerSecond.toFixed(1).padStart(7)}  ${String(r.peakInFlight).padStart(14)}  ${r.ideal.toFixed(0).padStart(13)}`);
  }
  const out = path.join(import.meta.dirname, 'results');
  await mkdir(out, { recursive: true });
  await writeFile(path.join(out, 'judge-stage.json'), `${JSON.stringify({ latencyMs, rows, node: process.version, at: new Date().toISOString() }, null, 2)}\n`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
