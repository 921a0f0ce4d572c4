import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import type { Command } from 'commander';
import { listEnvs, make } from '../../core/registry.js';
import { runEpisode } from '../../core/rollout.js';
import type { AgentEnv } from '../../core/types.js';
import { shortRef } from '../../hub/store/layout.js';
import { loadPipelineConfig } from '../../runtime/config-file.js';
import { ensurePortFree, startDevServer, startWorkerProcess, type DevServer, type WorkerProcess } from '../../runtime/dev-server.js';
import { tensorboardDirs } from '../../runtime/run-dir.js';
import { SEARCH_ATTRIBUTES } from '../../loop/search-attributes.js';
import type { IterationMetrics, PipelineStatus } from '../../loop/status.js';
import { requireTemporalBinary } from '../../runtime/temporal-cli.js';
import { resolveAgent } from '../../policy/specs.js';
import { parsePort, parsePositiveInteger, printJson } from '../options.js';
import { formatTable } from '../table.js';
import { compare, type Comparison } from '../../eval/compare.js';
import { formatDifferenceInterval, formatInterval, formatP } from '../../eval/format.js';
import type { EvalResult } from '../../eval/result.js';
import { loadEvalResult } from './compare.js';
import { bestRefs, formatStatus, queryStatus, startPipeline } from './pipeline.js';

/** Options of the closed-loop demo. */
interface LoopDemoOptions {
  config: string;
  port: number;
  uiPort: number;
  dir: string;
  keep?: boolean;
  json?: boolean;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * The closed loop, end to end on this machine: a Temporal dev server (SQLite under `dir`, Web UI), the CPU and
 * GPU workers as child processes, and `trainingLoop` on the demo configuration. Prints the Web UI link, a line
 * per stage change and the per-iteration table (held-out success with its CI, reward, steps, train loss, RL
 * entropy and rollout mismatch, wall time) each time an iteration completes, and at the end each phase's gain
 * ({@link phaseGains}: SFT against the baseline, the last iteration against the SFT, McNemar on paired episodes);
 * stops the stack at the end unless `keep`. The run lives in the server's db: a demo interrupted and started again
 * with the same `dir` finds it in the Web UI.
 */
async function runLoopDemo(opts: LoopDemoOptions): Promise<number> {
  const config = await loadPipelineConfig(opts.config);
  const binary = requireTemporalBinary();
  await ensurePortFree('127.0.0.1', opts.port, 'Temporal gRPC frontend (--port)');
  await ensurePortFree('127.0.0.1', opts.uiPort, 'Temporal Web UI (--ui-port)');
  const dir = resolve(opts.dir);
  await mkdir(dir, { recursive: true });
  const log = (line: string): void => void process.stdout.write(`${line}\n`);
  let server: DevServer | undefined;
  const workers: WorkerProcess[] = [];
  let connection: Connection | undefined;
  let interrupted = false;
  const onSignal = (): void => {
    interrupted = true;
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    log(`demo: starting the Temporal dev server (state in ${join(dir, 'temporal.db')}) and the workers…`);
    server = await startDevServer({
      binary,
      dbFilename: join(dir, 'temporal.db'),
      port: opts.port,
      uiPort: opts.uiPort,
      searchAttributes: SEARCH_ATTRIBUTES,
      logFile: join(dir, 'temporal.log'),
    });
    const address = server.address;
    for (const kind of ['cpu', 'gpu'] as const) {
      workers.push(await startWorkerProcess({ kind, address, store: join(dir, 'store'), logFile: join(dir, `worker-${kind}.log`) }));
    }
    connection = await Connection.connect({ address });
    const client = new Client({ connection });
    const { workflowId, handle } = await startPipeline(client, config);
    log(`demo: trainingLoop '${workflowId}' on ${config.env} (${config.max_iterations} iterations at most${config.target ? `, target ${config.target.metric} ≥ ${config.target.value}` : ''})`);
    log(`demo: watch it in the Temporal Web UI: ${server.uiUrl ?? `http://127.0.0.1:${opts.uiPort}`}/namespaces/default/workflows/${workflowId}`);
    log(`demo: or: temporal workflow query --address ${address} --workflow-id ${workflowId} --type pipeline_status`);
    for (const dir of tensorboardDirs(config)) log(`demo: training curves: .venv/bin/tensorboard --logdir ${dir}`);
    const t0 = Date.now();
    let shown = 0;
    let lastStage = '';
    let last: PipelineStatus | undefined;
    const result = handle.result();
    let finished = false;
    result.then(
      () => (finished = true),
      () => (finished = true),
    );
    while (!finished && !interrupted) {
      await sleep(2000);
      const status = await queryStatus(client, workflowId, 10_000).catch(() => undefined);
      if (status === undefined) continue;
      last = status;
      const stage = `${status.iteration}:${status.stage}`;
      if (stage !== lastStage && !opts.json) {
        lastStage = stage;
        const progress = status.stages[status.stage as keyof typeof status.stages]?.progress;
        log(`[${((Date.now() - t0) / 1000).toFixed(0).padStart(4)} s] iteration ${status.iteration}: ${status.stage}${progress ? ` (${progress.done}/${progress.total} ${progress.unit})` : ''}`);
      }
      if (status.history.length > shown && !opts.json) {
        shown = status.history.length;
        log('');
        log(historyTable(status));
        log('');
      }
    }
    if (interrupted) {
      log(`demo: interrupted; the run stays in ${join(dir, 'temporal.db')} (start the stack again with \`gymflow dev --db ${join(dir, 'temporal.db')}\` to let it finish)`);
      return 130;
    }
    const outcome = await result.then(
      (r) => r,
      (err: unknown) => err as Error,
    );
    if (outcome instanceof Error) {
      log(`demo: the run failed: ${outcome.message}`);
      if (last) log(formatStatus(last));
      return 1;
    }
    const final = (await queryStatus(client, workflowId, 10_000)) ?? last;
    // The comparison is a report on a finished run: one that cannot be made (an evaluation of one episode) is said, not fatal.
    const gains = await phaseGains(final?.history ?? [], join(dir, 'store')).catch((err: unknown) => {
      const line = `demo: no comparison of the phases: ${(err as Error).message}`;
      if (opts.json) process.stderr.write(`${line}\n`);
      else log(line);
      return [];
    });
    if (opts.json) printJson({ workflowId, result: outcome, wallSeconds: (Date.now() - t0) / 1000, gains: gains.map(gainJson) });
    else {
      if (final && final.history.length > shown) log(historyTable(final));
      log(`demo: done in ${((Date.now() - t0) / 60000).toFixed(1)} min: ${outcome.stopReason}, ${outcome.iterations} training iterations${formatBestSuccess(outcome.best, final?.history ?? [])}`);
      for (const line of bestArtifactLines(outcome.best, final?.history ?? [], join(dir, 'store'))) log(line);
      for (const g of gains) log(formatPhaseGain(`the ${g.phase} phase's gain`, g.gain).join('\n'));
    }
    if (opts.keep) {
      log('demo: --keep: the dev server and workers stay up; Ctrl-C stops them.');
      while (!interrupted) await sleep(1000);
    }
    return 0;
  } finally {
    await connection?.close();
    await Promise.all(workers.map((w) => w.stop(90_000)));
    await server?.stop();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

/**
 * The closing line's best held-out success, to three decimals as in the table and with its count when the
 * history has it (`, best held-out success 0.797 = 59/74 (iteration 1)`): to two decimals 59/74 reads 0.80,
 * as if the demo's 0.8 target were met.
 */
export function formatBestSuccess(best: { iteration: number; success: number } | undefined, history: readonly IterationMetrics[]): string {
  if (best === undefined) return '';
  const n = history.find((h) => h.iteration === best.iteration)?.success?.n;
  const count = n === undefined ? '' : ` = ${Math.round(best.success * n)}/${n}`;
  return `, best held-out success ${best.success.toFixed(3)}${count} (iteration ${best.iteration})`;
}

/**
 * How to get the best iteration's policy and checkpoint out of the demo's store: after RL an earlier
 * iteration may be the best one, and its artifacts are in the store, not in a directory of their own.
 */
export function bestArtifactLines(best: { iteration: number } | undefined, history: readonly IterationMetrics[], store: string): string[] {
  if (best === undefined) return [];
  const refs = bestRefs(best, history);
  const lines: string[] = [];
  if (refs.policy !== undefined) lines.push(`demo: its policy (ONNX; act with --agent local:best-policy): npx gymflow store checkout ${shortRef(refs.policy)} best-policy --store ${store}`);
  if (refs.checkpoint !== undefined) lines.push(`demo: its checkpoint (Hugging Face): npx gymflow store checkout ${shortRef(refs.checkpoint)} best-checkpoint --store ${store}`);
  return lines;
}

/** One side of a phase's gain: an iteration and its held-out evaluation. */
export interface GainSide {
  iteration: number;
  /** `baseline`, or the iteration's phase name. */
  label: string;
  result: EvalResult;
}

/** What a phase added: `after` against `before` on the held-out episodes they share (`gymflow compare`'s numbers). */
export interface PhaseGain {
  before: GainSide;
  after: GainSide;
  /** `after` − `before` (A − B), with the exact McNemar test on the paired episodes. */
  comparison: Comparison;
}

/**
 * Compares two iterations' held-out evaluations as `gymflow compare --metric success --test mcnemar` does
 * (src/eval/compare.ts): the success difference with its paired bootstrap interval and the exact McNemar test on
 * the episodes both ran (same task, same seed: the loop evaluates the same episodes every iteration).
 */
export function phaseGain(before: GainSide, after: GainSide): PhaseGain {
  const label = (s: GainSide): string => `iteration ${s.iteration} (${s.label})`;
  const report = compare([after.result, before.result], {
    metric: 'success',
    mode: 'baseline',
    primary: 'mcnemar',
    labels: [label(after), label(before)],
    confidence: after.result.confidence,
  });
  const comparison = report.comparisons[0];
  if (comparison === undefined) throw new Error('compare returned no comparison for two results');
  return { before, after, comparison };
}

/**
 * The demo's closing lines for one phase's gain: both success rates with their Wilson intervals, the difference
 * with its bootstrap interval, and the exact McNemar p over the paired episodes (newly solved / lost).
 */
export function formatPhaseGain(phase: string, g: PhaseGain): string[] {
  const pct = Math.round(g.after.result.confidence * 100);
  const rate = (s: GainSide): string => {
    const m = s.result.metrics.success;
    return `iteration ${s.iteration} (${s.label}): held-out success ${m.successes}/${m.n} = ${(m.mean ?? 0).toFixed(3)}, Wilson ${pct}% ${formatInterval(m.wilson)}`;
  };
  const c = g.comparison;
  const sign = c.difference >= 0 ? '+' : '';
  const test = c.mcnemar
    ? `exact McNemar p = ${formatP(c.mcnemar.p)} over ${c.mcnemar.pairs} paired episodes (${c.mcnemar.onlyA} newly solved, ${c.mcnemar.onlyB} lost)`
    : 'no paired episodes: no McNemar test';
  return [
    `demo: ${phase}: ${sign}${c.difference.toFixed(3)} (${pct}% CI ${formatDifferenceInterval(c)}), ${test}${c.significant ? '' : ' — not significant at 0.05'}`,
    `  ${rate(g.before)}`,
    `  ${rate(g.after)}`,
  ];
}

/**
 * The two comparisons the demo ends with, from the stored evaluations of its iterations: the SFT phase (its last
 * iteration against the baseline) and the RL phase (the last iteration against the SFT phase's last). A phase the
 * run did not reach is left out.
 */
export async function phaseGains(history: readonly IterationMetrics[], store: string): Promise<{ phase: string; gain: PhaseGain }[]> {
  const baseline = history.find((h) => h.iteration === 0 && h.refs.eval !== undefined);
  const sft = history.filter((h) => h.algorithm === 'sft' && h.refs.eval !== undefined).at(-1);
  const last = history.filter((h) => h.algorithm !== 'baseline' && h.refs.eval !== undefined).at(-1);
  const side = async (h: IterationMetrics): Promise<GainSide> => ({
    iteration: h.iteration,
    label: h.iteration === 0 ? 'baseline' : h.phase,
    result: await loadEvalResult(h.refs.eval as string, store),
  });
  const gains: { phase: string; gain: PhaseGain }[] = [];
  if (baseline && sft) gains.push({ phase: sft.phase, gain: phaseGain(await side(baseline), await side(sft)) });
  if (sft && last && last.iteration > sft.iteration) gains.push({ phase: last.phase, gain: phaseGain(await side(sft), await side(last)) });
  return gains;
}

/** A phase's gain as `--json` prints it: the counts, Wilson intervals, difference, its interval and McNemar's test. */
function gainJson({ phase, gain }: { phase: string; gain: PhaseGain }): Record<string, unknown> {
  const side = (s: GainSide): Record<string, unknown> => ({ iteration: s.iteration, successes: s.result.metrics.success.successes, n: s.result.metrics.success.n, wilson: s.result.metrics.success.wilson });
  const c = gain.comparison;
  return { phase, before: side(gain.before), after: side(gain.after), difference: c.difference, ci: c.bootstrap, mcnemar: c.mcnemar, significant: c.significant };
}

/** The per-iteration part of a status: the table `gymflow pipeline status` prints after its stage table. */
function historyTable(status: PipelineStatus): string {
  const full = formatStatus(status);
  const at = full.indexOf('\niter');
  return at < 0 ? full : full.slice(at + 1).split('\n\n')[0] ?? full;
}

type EnvRow = {
  env: string;
  agent: string;
  episodes: number;
  steps: number;
  meanSteps: number;
  success: number;
  meanReward: number;
  /** Why the row has no numbers (e.g. no Docker engine for the sandbox). */
  note?: string;
};

/** Every registered environment, its expert and a random agent, a few seeded held-out episodes each. */
async function runEnvTour(episodes: number, json: boolean | undefined): Promise<void> {
  const rows: EnvRow[] = [];
  for (const s of listEnvs()) {
    for (const agentSpec of [...Object.keys(s.agents ?? {}), 'random']) {
      let env: AgentEnv | undefined;
      let steps = 0;
      let successes = 0;
      let reward = 0;
      let note: string | undefined;
      try {
        // Inside the try: an environment that needs what this machine lacks (an OpenEnv server's address) is a note.
        env = make(s.id);
        const tasks = env.listTasks?.('heldout') ?? [];
        for (let i = 0; i < episodes; i++) {
          const agent = resolveAgent(agentSpec, s.id, { seed: i });
          const task = tasks[i % Math.max(1, tasks.length)]?.id;
          const t = await runEpisode(env, agent, { envId: s.id, seed: i, ...(task ? { task } : {}) });
          steps += t.steps.length;
          successes += t.outcome.success ? 1 : 0;
          reward += t.steps.reduce((a, st) => a + (st.envReward ?? 0), 0);
        }
      } catch (err) {
        // One environment that cannot run here (no Docker engine for the sandbox) must not hide the others.
        note = `unavailable: ${(err as Error).message.split('\n')[0]}`;
      } finally {
        await env?.close();
      }
      rows.push(
        note === undefined
          ? { env: s.id, agent: agentSpec, episodes, steps, meanSteps: steps / episodes, success: successes / episodes, meanReward: reward / episodes }
          : { env: s.id, agent: agentSpec, episodes: 0, steps: 0, meanSteps: NaN, success: NaN, meanReward: NaN, note },
      );
    }
  }
  if (json) return printJson(rows);
  console.log(
    formatTable(rows, [
      { key: 'env' },
      { key: 'agent' },
      { key: 'episodes', align: 'right' },
      { key: 'meanSteps', header: 'steps/ep', align: 'right' },
      { key: 'success', header: 'success', align: 'right' },
      { key: 'meanReward', header: 'mean reward', align: 'right' },
      { key: 'note' },
    ]),
  );
}

/**
 * `gymflow demo`: the closed training loop on Temporal with a tiny model (examples/demo.yaml): on recall-v0, SFT on
 * a flawed demonstrator's episodes, then RL iterations with the trained policy acting through onnxruntime-node;
 * it ends with each phase's gain on the held-out episodes ({@link phaseGains}). `--envs`: the quick tour instead
 * (every environment's expert and a random agent on a few held-out episodes).
 */
export function demoCommand(program: Command): void {
  program
    .command('demo')
    .description('run the closed training loop (Temporal dev server + workers + trainingLoop on examples/demo.yaml); --envs: a quick tour of the environments')
    .option('--config <file>', 'pipeline configuration', 'examples/demo.yaml')
    .option('--port <port>', 'Temporal gRPC port', parsePort, 7233)
    .option('--ui-port <port>', 'Temporal Web UI port', parsePort, 8233)
    .option('--dir <dir>', 'where the demo keeps the server db, the store and logs', '.gymflow/demo')
    .option('--keep', 'keep the dev server and workers running after the loop ends (Ctrl-C stops them)')
    .option('--envs', 'instead: every environment, its expert and a random agent on a few held-out episodes')
    .option('-n, --episodes <n>', '--envs: episodes per env and agent', parsePositiveInteger, 5)
    .option('--json', 'print JSON')
    .action(async (opts: { config: string; port: number; uiPort: number; dir: string; keep?: boolean; envs?: boolean; episodes: number; json?: boolean }) => {
      if (opts.envs) return runEnvTour(opts.episodes, opts.json);
      process.exitCode = await runLoopDemo(opts);
    });
}
