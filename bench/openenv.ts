/**
 * The OpenEnv bridge's cost: the expert of an environment played in-process, and the same episodes played through
 * gymflow's OpenEnv client on `serveEnv` (a WebSocket session over loopback, both ends in this process). Reports
 * steps per second and the median time of a step each way. Prints a table and writes `bench/results/openenv.json`.
 *
 * Usage: `npx tsx bench/openenv.ts [ENV_ID]` (default `gymflow/household-v0`; any registered id with an expert).
 */
import type { AgentContext } from '../src/core/agent.js';
import { make, spec } from '../src/core/registry.js';
import type { AgentEnv, TaskInfo } from '../src/core/types.js';
import { isDone } from '../src/core/types.js';
import { registerBuiltinEnvs } from '../src/envs/index.js';
import { registerOpenEnv } from '../src/envs/openenv/register.js';
import { serveEnv } from '../src/envs/openenv/serve.js';
import { median, runBench, writeReport } from './report.js';

/** Episodes per way (the same tasks and seeds both ways). */
const EPISODES = 200;

interface Row {
  way: string;
  episodes: number;
  steps: number;
  seconds: number;
  stepsPerSecond: number;
  medianStepMs: number;
  success: number;
}

async function play(way: string, env: AgentEnv, envId: string, tasks: readonly TaskInfo[], episodes = EPISODES): Promise<Row> {
  const expert = spec(envId).agents?.expert;
  if (expert === undefined) throw new Error(`${envId} has no expert`);
  const stepMs: number[] = [];
  let successes = 0;
  const start = process.hrtime.bigint();
  for (let i = 0; i < episodes; i++) {
    const task = tasks[i % tasks.length] as TaskInfo;
    const agent = expert({ seed: i });
    let ts = await env.reset({ task: task.id, seed: i });
    const info = ts.info.task as TaskInfo;
    await agent.reset?.(info, i);
    const history: AgentContext['history'][number][] = [];
    while (!isDone(ts)) {
      const { action } = await agent.act({ task: info, tools: env.tools, observation: ts.observation, history, stepIndex: history.length });
      const t0 = process.hrtime.bigint();
      ts = await env.step(action);
      stepMs.push(Number(process.hrtime.bigint() - t0) / 1e6);
      history.push({ action, observation: ts.observation, info: ts.info });
    }
    if (ts.info.success === true) successes += 1;
  }
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  return { way, episodes, steps: stepMs.length, seconds, stepsPerSecond: stepMs.length / seconds, medianStepMs: median(stepMs), success: successes / episodes };
}

async function main(): Promise<void> {
  registerBuiltinEnvs();
  const envId = process.argv[2] ?? 'gymflow/household-v0';
  const local = make(envId);
  const tasks = local.listTasks?.('train') ?? [];
  const served = await serveEnv({ envId, port: 0 });
  try {
    await registerOpenEnv('bench/openenv-served-v0', { url: served.url }, { replace: true });
    const remote = make('bench/openenv-served-v0');
    // Warm-up: the first episodes pay for compiling schemas and opening the session.
    for (const env of [local, remote]) await play('warm-up', env, envId, tasks, 5);
    const rows = [await play('in-process', local, envId, tasks), await play('OpenEnv client ↔ serveEnv (loopback WebSocket)', remote, envId, tasks)];
    await remote.close();
    const header = ['way', 'episodes', 'steps', 'steps/s', 'median step ms', 'success'];
    console.log(`${envId}, ${EPISODES} expert episodes each way`);
    console.log(header.join(' | '));
    for (const r of rows) console.log([r.way, r.episodes, r.steps, r.stepsPerSecond.toFixed(0), r.medianStepMs.toFixed(3), r.success.toFixed(3)].join(' | '));
    await writeReport('openenv', { envId, episodes: EPISODES, results: rows });
  } finally {
    await local.close();
    await served.close();
  }
}

runBench(main);
