/**
 * Environment throughput: for every registered environment with an `expert` agent, runs the expert
 * in-process (no recorder, no I/O) over the training tasks in order and reports steps and episodes per
 * second. Prints a table and writes `bench/results/env-steps.json`.
 *
 * Usage: `npm run bench:env-steps` (or `npx tsx bench/env-steps.ts`); `npx tsx bench/env-steps.ts ID…` measures
 * only those environments (`gymflow/sandbox-v0` is measured only when named). Targets on the 2-core machine: `gymflow/household-v0` 20,000 expert steps/s,
 * `gymflow/webshop-v0` 5,000 (a search, BM25 over 1,500 products, in about one step of five),
 * `gymflow/conversation-v0`, `gymflow/discussion-v0`, `gymflow/advisory-v0` and `gymflow/engineering-v0` 2,000.
 */
import { runBench, writeReport } from './report.js';
import type { AgentContext, AgentFactory } from '../src/core/agent.js';
import { listEnvs, make } from '../src/core/registry.js';
import type { AgentEnv, TaskInfo, TimeStep } from '../src/core/types.js';
import { isDone } from '../src/core/types.js';
import { registerBuiltinEnvs } from '../src/envs/index.js';

/** Measurement stops once both minimums are met. */
const MIN_STEPS = 2000;
const MIN_SECONDS = 2;
const WARMUP_EPISODES = 50;

interface Row {
  env: string;
  episodes: number;
  steps: number;
  seconds: number;
  stepsPerSecond: number;
  episodesPerSecond: number;
  success: number;
}

/** One episode of `agent` on `task`; returns its step count and success. */
async function episode(env: AgentEnv, makeAgent: AgentFactory, task: TaskInfo, seed: number): Promise<{ steps: number; success: boolean }> {
  const agent = makeAgent({ seed });
  let ts: TimeStep = await env.reset({ task: task.id, seed });
  const info = ts.info.task as TaskInfo;
  await agent.reset?.(info, seed);
  const history: { action: AgentContext['history'][number]['action']; observation: string; info: Record<string, unknown> }[] = [];
  while (!isDone(ts)) {
    const { action } = await agent.act({ task: info, tools: env.tools, observation: ts.observation, history, stepIndex: history.length });
    ts = await env.step(action);
    history.push({ action, observation: ts.observation, info: ts.info });
  }
  return { steps: history.length, success: ts.info.success === true };
}

async function measure(id: string, makeAgent: AgentFactory): Promise<Row> {
  const env = make(id);
  try {
    const tasks = env.listTasks?.('train') ?? [];
    if (tasks.length === 0) throw new Error(`${id}: listTasks('train') is empty`);
    const task = (i: number): TaskInfo => tasks[i % tasks.length] as TaskInfo;
    for (let i = 0; i < WARMUP_EPISODES; i++) await episode(env, makeAgent, task(i), i);

    let episodes = 0;
    let steps = 0;
    let successes = 0;
    const start = process.hrtime.bigint();
    let elapsed = 0;
    while (steps < MIN_STEPS || elapsed < MIN_SECONDS) {
      const r = await episode(env, makeAgent, task(episodes), episodes);
      episodes += 1;
      steps += r.steps;
      if (r.success) successes += 1;
      elapsed = Number(process.hrtime.bigint() - start) / 1e9;
    }
    return {
      env: id,
      episodes,
      steps,
      seconds: elapsed,
      stepsPerSecond: steps / elapsed,
      episodesPerSecond: episodes / elapsed,
      success: successes / episodes,
    };
  } finally {
    await env.close();
  }
}

function table(rows: Row[]): string {
  const header = ['env', 'episodes', 'steps', 'steps/s', 'episodes/s', 'success'];
  const body = rows.map((r) => [
    r.env,
    String(r.episodes),
    String(r.steps),
    r.stepsPerSecond.toFixed(0),
    r.episodesPerSecond.toFixed(0),
    r.success.toFixed(3),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((row) => (row[i] ?? '').length)));
  const line = (cells: string[]): string => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(line)].join('\n');
}

/**
 * Measured only when named: a Docker container per episode makes 50 warm-up episodes and 2,000 steps take many
 * minutes (`npm run bench:sandbox` measures the sandbox).
 */
const NAMED_ONLY = new Set(['gymflow/sandbox-v0']);

async function main(): Promise<void> {
  registerBuiltinEnvs();
  const only = process.argv.slice(2);
  const unknown = only.filter((id) => !listEnvs().some((s) => s.id === id));
  if (unknown.length > 0) throw new Error(`unknown environment(s): ${unknown.join(', ')}`);
  const rows: Row[] = [];
  for (const s of listEnvs()) {
    if (only.length > 0 ? !only.includes(s.id) : NAMED_ONLY.has(s.id)) continue;
    const expert = s.agents?.expert;
    if (!expert) continue;
    rows.push(await measure(s.id, expert));
  }
  console.log(table(rows));
  await writeReport('env-steps', {
    minSteps: MIN_STEPS,
    minSeconds: MIN_SECONDS,
    warmupEpisodes: WARMUP_EPISODES,
    ...(only.length > 0 ? { only } : {}),
    results: rows,
  });
}

runBench(main);
