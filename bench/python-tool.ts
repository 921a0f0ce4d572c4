/**
 * The `python` tool of `gymflow/tool-use-python-v0`: call latency, in one run on one engine.
 *
 * - cold: the first call of a runner (container create + start, supervisor and interpreter start);
 * - warm call: a call in a running episode's interpreter (`x += 1; x`), through `PythonRunner.run` (one request
 *   on the attached exec stream) and through `env.step` (the environment's validation and observation too);
 * - warm call, task-sized: the expert's table code for a held-out table task (the table pasted in, ~1 KB);
 * - episode start: the first call after `newEpisode()` (old interpreter killed, work areas wiped, new interpreter),
 *   at once and after 200 ms (the `prepare` sent at reset has finished: what an agent that thinks sees);
 * - baseline: a new `docker exec python3 -c` per call (`Sandbox.exec`), what the tool would cost without the
 *   long-lived supervisor;
 * - expert episodes of the python kinds per second (`env.step` through the expert, held-out and training tasks).
 *
 * The done-when of the tool: warm call p50 ≤ 20 ms and p95 ≤ 50 ms. Prints a table and writes
 * `bench/results/python-tool.json`. Usage: `npm run bench:python-tool [-- --quick]`. Needs the engine and the image
 * (`gymflow sandbox build-image`).
 */
import { formatTable } from '../src/cli/table.js';
import { runEpisode } from '../src/core/rollout.js';
import { ToolUseEnv } from '../src/envs/tool-use/env.js';
import { ToolUseExpert } from '../src/envs/tool-use/expert.js';
import { aggregateCode } from '../src/envs/tool-use/python-code.js';
import { PythonRunner } from '../src/envs/tool-use/python-runner.js';
import { isPythonTask, listBankTasks } from '../src/envs/tool-use/task-bank.js';
import { lookupTable } from '../src/envs/tool-use/extended-lookup.js';
import { defaultKnowledgeBase } from '../src/envs/tool-use/knowledge-base.js';
import { Sandbox } from '../src/sandbox/index.js';
import { runBench, writeReport } from './report.js';

const quick = process.argv.includes('--quick');
const WARM = quick ? 200 : 1000;
const EPISODES = quick ? 20 : 100;
const BASELINE = quick ? 10 : 30;

interface Row {
  what: string;
  n: number;
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
  meanMs: number;
}

function pct(xs: readonly number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] ?? NaN;
}

function row(what: string, xs: readonly number[]): Row {
  const r = (x: number): number => Number(x.toFixed(2));
  return { what, n: xs.length, p50Ms: r(pct(xs, 50)), p95Ms: r(pct(xs, 95)), p99Ms: r(pct(xs, 99)), meanMs: r(xs.reduce((a, b) => a + b, 0) / xs.length) };
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

function check(ok: boolean, what: string): void {
  if (!ok) throw new Error(`bench: ${what}`);
}

async function main(): Promise<void> {
  const rows: Row[] = [];

  // ---- the runner alone
  const runner = new PythonRunner();
  runner.newEpisode();
  const cold = await timed(async () => check((await runner.run('x = 0')).status === 'ok', 'first call failed'));
  rows.push(row('cold: first call (container + supervisor + interpreter)', [cold]));
  for (let i = 0; i < 20; i++) await runner.run('x += 1\nx');
  const warm: number[] = [];
  for (let i = 0; i < WARM; i++) warm.push(await timed(async () => check((await runner.run('x += 1\nx')).status === 'ok', 'warm call failed')));
  rows.push(row('warm call: PythonRunner.run("x += 1; x")', warm));

  const kb = defaultKnowledgeBase();
  const q = { collection: 'city' as const, filter: { attribute: 'region', op: 'eq' as const, value: 'Highveld' }, attribute: 'population' };
  const tableCode = aggregateCode(q, 'median', lookupTable(kb, 'city', 'region, population'));
  const sized: number[] = [];
  for (let i = 0; i < WARM / 2; i++) sized.push(await timed(async () => check((await runner.run(tableCode)).value === '71400.0', 'table code failed')));
  rows.push(row(`warm call, task-sized: median over a pasted table (${tableCode.length} B of code)`, sized));

  const fresh: number[] = [];
  const prepared: number[] = [];
  for (let i = 0; i < EPISODES; i++) {
    runner.newEpisode();
    fresh.push(await timed(async () => check((await runner.run('1')).status === 'ok', 'episode start failed')));
    runner.newEpisode();
    await new Promise((r) => setTimeout(r, 200));
    prepared.push(await timed(async () => check((await runner.run('1')).status === 'ok', 'prepared start failed')));
  }
  rows.push(row('episode start: first call right after newEpisode()', fresh));
  rows.push(row('episode start: first call 200 ms after newEpisode() (prepared)', prepared));
  await runner.close();

  // ---- through the environment
  const env = new ToolUseEnv({ python: true });
  const task = listBankTasks(true, 'heldout').find(isPythonTask);
  await env.reset({ task: task?.id ?? '', seed: 0 });
  await env.step({ tool: 'python', params: { code: 'x = 0' } });
  for (let i = 0; i < 20; i++) await env.step({ tool: 'python', params: { code: 'x += 1\nx' } });
  const steps: number[] = [];
  for (let i = 0; i < WARM; i++) steps.push(await timed(() => env.step({ tool: 'python', params: { code: 'x += 1\nx' } })));
  rows.push(row('warm call: env.step(python "x += 1; x")', steps));

  // ---- expert episodes of the python kinds
  const pythonTasks = [...listBankTasks(true, 'heldout'), ...listBankTasks(true, 'train')].filter(isPythonTask).map((t) => t.id);
  const episodeMs: number[] = [];
  let episodeSteps = 0;
  let solved = 0;
  for (let i = 0; i < EPISODES; i++) {
    const id = pythonTasks[(i * 7) % pythonTasks.length] as string;
    episodeMs.push(
      await timed(async () => {
        const t = await runEpisode(env, new ToolUseExpert(), { envId: 'gymflow/tool-use-python-v0', task: id, seed: i });
        episodeSteps += t.steps.length;
        if (t.outcome.success) solved += 1;
      }),
    );
  }
  rows.push(row('expert episode of a python kind (reset … submit)', episodeMs));
  await env.close();

  // ---- baseline: one docker exec per call
  const sb = await Sandbox.create({ task: 'bench-python' });
  const execs: number[] = [];
  for (let i = 0; i < BASELINE; i++) execs.push(await timed(async () => check((await sb.exec(['python3', '-S', '-c', 'print(1)'])).exitCode === 0, 'exec failed')));
  rows.push(row('baseline: docker exec python3 -c per call (Sandbox.exec)', execs));
  await sb.destroy();

  const warmRow = rows.find((r) => r.what.startsWith('warm call: PythonRunner')) as Row;
  console.log(formatTable(rows as unknown as Record<string, unknown>[], [
    { key: 'what' },
    { key: 'n', align: 'right' },
    { key: 'p50Ms', header: 'p50 ms', align: 'right' },
    { key: 'p95Ms', header: 'p95 ms', align: 'right' },
    { key: 'p99Ms', header: 'p99 ms', align: 'right' },
    { key: 'meanMs', header: 'mean ms', align: 'right' },
  ]));
  const totalS = episodeMs.reduce((a, b) => a + b, 0) / 1000;
  console.log(`\nexpert: ${solved}/${EPISODES} python-kind episodes solved, ${(EPISODES / totalS).toFixed(1)} episodes/s, ${(episodeSteps / totalS).toFixed(0)} steps/s`);
  const target = { p50Ms: 20, p95Ms: 50 };
  const met = warmRow.p50Ms <= target.p50Ms && warmRow.p95Ms <= target.p95Ms;
  console.log(`warm call target p50 ≤ ${target.p50Ms} ms, p95 ≤ ${target.p95Ms} ms: ${met ? 'met' : 'NOT met'}`);
  await writeReport('python-tool', {
    quick,
    target,
    targetMet: met,
    results: rows,
    expert: { episodes: EPISODES, solved, episodesPerSecond: EPISODES / totalS, stepsPerSecond: episodeSteps / totalS },
  });
}

runBench(main);
