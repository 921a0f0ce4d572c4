/**
 * One soak run: a `trainingLoop` of a tiny configuration on its own stack (bench/soak/stack.ts), with the faulty
 * judge and policy APIs in front of it, optionally under chaos, probed for its status every second. Returns what
 * the SLO needs (bench/soak/slo.ts): the loop's end, its lineage, the runs' history lengths, the probes, the
 * events and faults, and what was left behind.
 */
import { existsSync, readdirSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection, WorkflowNotFoundError } from '@temporalio/client';
import { clientConnectionOptions } from '../../src/runtime/temporal-target.js';
import { mixSeed, Rng } from '../../src/core/rng.js';
import { defined } from '../../src/core/defined.js';
import { parsePipelineConfig, type PipelineConfig } from '../../src/loop/config.js';
import { continuation } from '../../src/loop/continuation.js';
import type { IterationMetrics } from '../../src/loop/status.js';
import { closedRun, startPipeline } from '../../src/cli/commands/pipeline.js';
import { fullMessage } from '../../src/cli/errors.js';
import { freePort } from '../../src/runtime/dev-server.js';
import { ArtifactStore } from '../../src/hub/store/store.js';
import { loadTrajectories } from '../../src/hub/store/trajectory-set.js';
import { dockerClient } from '../../src/sandbox/docker.js';
import { LABEL_WORKFLOW } from '../../src/sandbox/scope.js';
import { FAULTS_ENV } from '../../src/core/faults.js';
import { cancelSignal, pauseSignal, resumeSignal } from '../../workflows/messages.js';
import type { LoopResult } from '../../workflows/training-loop.js';
import { processesMentioning } from '../../tests/support/processes.js';
import { startFaultyJudge, startFaultyProxy, type FaultTally } from './apis.js';
import { ChaosDriver, type ChaosAction, type ChaosEvent, type ChaosKind } from './chaos.js';
import { StatusProber, type ProbeSample } from './prober.js';
import { SoakStack } from './stack.js';

/** The configurations the soak runs. */
export const SOAK_CONFIGS = ['household', 'sandbox'] as const;
/** One of {@link SOAK_CONFIGS}. */
export type SoakConfigName = (typeof SOAK_CONFIGS)[number];

/** Fault rates (each in [0, 1]). */
export interface FaultRates {
  /** Sandbox execs refused (the test-only hook, `GYMFLOW_FAULTS`); the sandbox configuration only. */
  sandboxExec: number;
  /** Judge requests failed with 429, 500 or a timeout. */
  judge: number;
  /** Policy server requests failed with 500. */
  policy: number;
}

/** The issue's rates: sandbox execs 25%, judge 30%, policy server 5%. */
export const DEFAULT_FAULT_RATES: FaultRates = { sandboxExec: 0.25, judge: 0.3, policy: 0.05 };

/** Options of one run. */
export interface RunOptions {
  label: string;
  config: SoakConfigName;
  iterations: number;
  seed: number;
  /**
   * Chaos between events, in ms; none: an undisturbed run. `minEvents`: at least that many, kept up with the loop's
   * progress (chaos.ts, `ChaosPace`) however fast the machine runs it.
   */
  chaos?: { intervalMs: readonly [number, number]; kinds?: readonly ChaosKind[]; minEvents?: number };
  /** Fault rates; none: no injected faults. */
  faults?: FaultRates;
  /**
   * The CI version's cuts (tests/soak.test.ts): a fixed number of optimiser steps per iteration (`train.config.max_steps`,
   * which is then also the undisturbed run's count) and the expert as the evaluation's agent (no second policy server
   * per iteration).
   */
  quick?: { maxSteps: number };
  /** Give up (and fail the SLO) after this long. */
  deadlineMs: number;
  temporalAddress?: string;
  /** Keep the scratch directory (logs) for a post-mortem. */
  keep?: boolean;
  log: (line: string) => void;
}

/** What one run measured. */
export interface RunResult {
  label: string;
  workflowId: string;
  wallMs: number;
  /** How the loop ended: `max_iterations` when it went all the way. */
  stopReason: string | undefined;
  /** Executions that ended failed, terminated or timed out (each was continued so the soak could go on). */
  aborted: { status: string; at: number }[];
  history: IterationMetrics[];
  /** Seconds from the start to the loop's close (status queries after it ask a closed run: not counted). */
  closedAtS: number;
  /** Problems with the lineage (empty when complete), and what it holds. */
  lineage: {
    problems: string[];
    trajectories: number;
    duplicates: number;
    injectedExecFaults: number;
    /**
     * The configuration whose data the chaos changes (the sandbox's: refused execs and killed containers are in its
     * episodes): each iteration's training schedule as its trainer built it from that iteration's dataset (the
     * checkpoint's `totalSteps`), the steps an undisturbed training of the same data runs.
     */
    scheduledSteps?: (number | undefined)[];
  };
  /** History length of every execution of the workflow id (continue-as-new runs and continuations). */
  runs: { runId: string; status: string; events: number }[];
  samples: ProbeSample[];
  events: ChaosEvent[];
  faults: { judge?: FaultTally; policy?: FaultTally; sandboxExec?: { injected: number } };
  restarts: { what: string; ms: number }[];
  /** What was left after the stack stopped: processes, containers, temporary files. */
  leftovers: { processes: string[]; containers: string[]; tmpFiles: string[]; scratchDirRemoved: boolean };
}

/** The tiny policy every configuration trains (1 layer). */
const TINY = { hidden_size: 32, intermediate_size: 64, num_hidden_layers: 1, num_attention_heads: 2, num_key_value_heads: 1 } as const;

/**
 * The soak's configuration: a few episodes acted by the policy itself (served by the GPU worker, through the
 * faulty proxy), scored by the rules and the faulty judge, GRPO on them, a held-out evaluation by the policy.
 * `sandbox`: the expert acts in hardened containers (whose execs fail at the sandbox rate), SFT on its episodes.
 */
export function soakConfig(name: SoakConfigName, o: { dir: string; iterations: number; seed: number; judgeUrl: string; servePort: number; quick?: { maxSteps: number } }): PipelineConfig {
  const common = {
    name: `soak-${name}`,
    seed: o.seed,
    store: join(o.dir, 'store'),
    work_dir: join(o.dir, 'work'),
    max_iterations: o.iterations,
  };
  const judge = { provider: 'openai', model: 'soak-judge', base_url: o.judgeUrl, timeout: '3s', concurrency: 4 };
  // The GPU worker's server binds 127.0.0.2; the CPU workers reach it at 127.0.0.1, where the faulty proxy listens.
  const serve = { host: '127.0.0.1', bind: '127.0.0.2', port: o.servePort, startup_timeout: '3m' };
  const quickTrain = o.quick ? { max_steps: o.quick.maxSteps } : {};
  const evalSection = { tasks: 2, max_steps: 3, max_new_tokens: 16, baseline: false, concurrency: 2, ...(o.quick ? { agent: 'expert' } : {}) };
  if (name === 'household') {
    return parsePipelineConfig(
      {
        ...common,
        env: 'gymflow/household-v0',
        policy: { init: { tokenizer_corpus: 'expert', tiny: { ...TINY, max_position_embeddings: 4096, bpe_vocab_size: 512, system_prompt: 'drop', seed: o.seed } }, serve },
        reward: { rules: true, judge },
        collect: { agent: 'policy', tasks: 3, group_size: 2, shard_size: 1, concurrency: 2, max_steps: 3, max_new_tokens: 16, heartbeat_timeout: '10s' },
        train: { command: 'rl', heartbeat_timeout: '20s', config: { epochs: 1, batch_size: 2, max_length: 2048, save_every: 1, log_every: 1, loss: { algorithm: 'grpo' }, drop_uniform_groups: false, ...quickTrain } },
        eval: evalSection,
      },
      `soak:${name}`,
    );
  }
  return parsePipelineConfig(
    {
      ...common,
      env: 'gymflow/sandbox-v0',
      policy: { init: { tiny: { ...TINY, max_position_embeddings: 4096, bpe_vocab_size: 512, seed: o.seed } }, serve },
      reward: { rules: true, judge },
      collect: { agent: 'expert', tasks: 4, group_size: 1, shard_size: 2, concurrency: 2, max_steps: 30, heartbeat_timeout: '10s' },
      export: { success_only: false },
      train: { command: 'sft', heartbeat_timeout: '20s', config: { epochs: 1, batch_size: 2, max_length: 2048, save_every: 1, log_every: 1, ...quickTrain } },
      eval: evalSection,
    },
    `soak:${name}`,
  );
}

/** Polls `probe` every 300 ms until it returns a value or `timeoutMs` passes (then `undefined`). */
async function poll<T>(timeoutMs: number, probe: () => T | undefined | Promise<T | undefined>): Promise<T | undefined> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined || Date.now() > deadline) return v;
    await new Promise((r) => setTimeout(r, 300));
  }
}

/** Running (or, with `all`, any) containers labelled with workflow `id`. */
async function workflowContainers(id: string, all = false): Promise<{ Id: string; State: string }[]> {
  return dockerClient().listContainers({ all, filters: { label: [`${LABEL_WORKFLOW}=${id}`] } });
}

/** The lineage of a finished loop: every iteration's refs in the store, each scored set complete and without duplicates. */
async function checkLineage(store: ArtifactStore, history: readonly IterationMetrics[], config: PipelineConfig, iterations: number, faultsChangeData: boolean): Promise<RunResult['lineage']> {
  const problems: string[] = [];
  // `rollouts` is the scored set too (workflows/runner.ts); the collected shards are its parents.
  const kinds = { tasks: 'task-set', rollouts: 'scored-trajectories', scored: 'scored-trajectories', dataset: 'dataset', checkpoint: 'checkpoint', eval: 'eval' } as const;
  const got = history.map((h) => h.iteration).join(',');
  const want = Array.from({ length: iterations }, (_, i) => i + 1).join(',');
  if (got !== want) problems.push(`iterations in the history: [${got}], expected [${want}]`);
  const seen = new Set<string>();
  let trajectories = 0;
  let duplicates = 0;
  let injectedExecFaults = 0;
  const scheduledSteps: (number | undefined)[] = [];
  const collect = config.phases[0]?.collect;
  if (collect === undefined) throw new Error('the soak configuration has no phase');
  const perSet = collect.tasks * collect.group_size;
  for (const h of history) {
    for (const [field, kind] of Object.entries(kinds)) {
      const ref = h.refs[field as keyof typeof kinds];
      if (ref === undefined) {
        problems.push(`iteration ${h.iteration}: no ${field} ref`);
        continue;
      }
      const entry = await store.stat(ref).catch((err: unknown) => (problems.push(`iteration ${h.iteration}: ${field} ${ref} not in the store (${fullMessage(err)})`), undefined));
      if (entry && entry.kind !== kind) problems.push(`iteration ${h.iteration}: ${field} ${ref} is a ${entry.kind}, expected a ${kind}`);
    }
    const scheduled = h.refs.checkpoint === undefined ? undefined : (await store.stat(h.refs.checkpoint).catch(() => undefined))?.meta?.['totalSteps'];
    scheduledSteps.push(typeof scheduled === 'number' ? scheduled : undefined);
    if (h.refs.scored === undefined) continue;
    const parents = await Promise.all((await store.stat(h.refs.scored)).parents.map((p) => store.stat(p).then((e) => e.kind, () => 'missing')));
    if (!parents.includes('trajectories')) problems.push(`iteration ${h.iteration}: the scored set's parents are [${parents.join(', ')}], no collected trajectories`);
    const set = await loadTrajectories(store, h.refs.scored);
    trajectories += set.length;
    if (set.length !== perSet) problems.push(`iteration ${h.iteration}: ${set.length} scored trajectories, expected ${perSet}`);
    const perTask = new Map<string, number>();
    for (const t of set) perTask.set(t.task.id, (perTask.get(t.task.id) ?? 0) + 1);
    const uneven = [...perTask].filter(([, n]) => n !== collect.group_size);
    if (uneven.length > 0) problems.push(`iteration ${h.iteration}: tasks with other than ${collect.group_size} episodes: ${uneven.map(([t, n]) => `${t}×${n}`).join(', ')}`);
    for (const t of set) {
      // The sandbox's observation of an exec the hook refused (src/sandbox/sandbox.ts `exec`).
      injectedExecFaults += t.steps.filter((step) => step.observation.includes('injected fault at sandbox.exec')).length;
      // One episode is its content and its place in the plan (index, group, member, seed): a deterministic agent on a
      // task drawn again in another iteration acts the same (the same content id) in an episode of its own.
      const episode = `${t.id} ${JSON.stringify(t.metadata['collect'] ?? null)}`;
      if (seen.has(episode)) duplicates++;
      seen.add(episode);
    }
  }
  if (duplicates > 0) problems.push(`${duplicates} trajectories appear more than once across the iterations' scored sets`);
  return { problems, trajectories, duplicates, injectedExecFaults, ...(faultsChangeData ? { scheduledSteps } : {}) };
}

/**
 * Sends a signal with `send`; false when no run of the workflow is open to take it — the loop closed a moment before
 * (its last iteration done), so a chaos event has no target then, rather than failing.
 */
async function signalOpenRun(send: () => Promise<void>): Promise<boolean> {
  try {
    await send();
    return true;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError || /workflow execution already completed/i.test(fullMessage(err))) return false;
    throw err;
  }
}

/** Whether a Docker call failed because its container is gone or no longer running (404, 409). */
function containerGone(err: unknown): boolean {
  const code = (err as { statusCode?: unknown }).statusCode;
  return code === 404 || code === 409;
}

/** Runs the loop once (see the module comment). */
export async function runOnce(o: RunOptions): Promise<RunResult> {
  const dir = await mkdtemp(join(tmpdir(), `gymflow-soak-${o.label}-`));
  const tmp = join(dir, 'tmp');
  await mkdir(tmp, { recursive: true });
  const workflowId = `soak-${o.label}-${o.seed}`;
  const faults = o.faults;
  const judge = await startFaultyJudge({ rate: faults?.judge ?? 0, seed: mixSeed(o.seed, 2), hangMs: 5_000 });
  const servePort = await freePort();
  const proxy = await startFaultyProxy({ listen: { host: '127.0.0.1', port: servePort }, target: { host: '127.0.0.2', port: servePort }, rate: faults?.policy ?? 0, seed: mixSeed(o.seed, 3) });
  const config = soakConfig(o.config, { dir, iterations: o.iterations, seed: o.seed, judgeUrl: judge.baseUrl, servePort, ...defined({ quick: o.quick }) });
  const workerEnv: NodeJS.ProcessEnv = { OPENAI_API_KEY: 'EMPTY' };
  if (faults && o.config === 'sandbox') workerEnv[FAULTS_ENV] = `sandbox.exec=${faults.sandboxExec},seed=${mixSeed(o.seed, 4)}`;

  let stack: SoakStack | undefined;
  let connection: Connection | undefined;
  let prober: StatusProber | undefined;
  const result: RunResult = {
    label: o.label,
    workflowId,
    wallMs: 0,
    stopReason: undefined,
    aborted: [],
    history: [],
    closedAtS: Number.POSITIVE_INFINITY,
    lineage: { problems: [], trajectories: 0, duplicates: 0, injectedExecFaults: 0 },
    runs: [],
    samples: [],
    events: [],
    faults: {},
    restarts: [],
    leftovers: { processes: [], containers: [], tmpFiles: [], scratchDirRemoved: false },
  };
  try {
    o.log(`[${o.label}] starting the stack in ${dir}`);
    const s = await SoakStack.start({ dir, workerEnv, tmpDir: tmp, ...defined({ temporalAddress: o.temporalAddress }) });
    stack = s;
    /** A client on the current server (a restart closes the old connection's server side; reconnect lazily). */
    const client = async (): Promise<Client> => {
      connection ??= await Connection.connect(clientConnectionOptions({ address: s.address, namespace: 'default' }));
      return new Client({ connection });
    };
    const t0 = Date.now();
    await startPipeline(await client(), config, { workflowId });
    o.log(`[${o.label}] started ${workflowId}: ${o.iterations} iterations of ${config.env}`);
    prober = new StatusProber(() => s.address, workflowId, () => s.state(), { everyMs: 1000, timeoutMs: 5_000, t0 });
    prober.start();

    let finished = false;
    let continuing = false;
    // The actions' own choices (how long a pause or an outage lasts, which cancel mode), seeded like the driver.
    const choices = new Rng(mixSeed(o.seed, 5));
    const continueRun = async (): Promise<string> => {
      const c = await client();
      const run = await closedRun(c, workflowId, { address: s.address, namespace: 'default' });
      if (run.result?.stopReason === 'max_iterations') return `the run had completed (${run.status}); nothing to continue`;
      const next = continuation(run, {});
      await startPipeline(c, next.config, { workflowId, ...defined({ state: next.state }) });
      return `continued from ${run.status}: ${next.summary}`;
    };
    const actions: Partial<Record<ChaosKind, ChaosAction>> = {
      'kill-workflow-worker': () => s.killWorker('workflows'),
      'kill-cpu-worker': () => s.killWorker('cpu'),
      'kill-gpu-worker': () => s.killWorker('gpu'),
      'kill-trainer': async () => {
        const pids = await poll(15_000, () => {
          const killed = s.killTrainers();
          return killed.length > 0 ? killed : undefined;
        });
        return pids === undefined ? undefined : `trainer pid ${pids.join(', ')} killed`;
      },
      'pause-resume': async () => {
        const handle = (await client()).workflow.getHandle(workflowId);
        if (!(await signalOpenRun(() => handle.signal(pauseSignal)))) return undefined;
        const pausedMs = choices.int(3_000, 10_000);
        await new Promise((r) => setTimeout(r, pausedMs));
        const resumed = await signalOpenRun(() => handle.signal(resumeSignal));
        return `paused for ${(pausedMs / 1000).toFixed(1)} s${resumed ? '' : '; the run had closed before the resume'}`;
      },
      'cancel-continue': async () => {
        continuing = true;
        try {
          const handle = (await client()).workflow.getHandle(workflowId);
          const mode = choices.int(0, 1) === 0 ? 'finish' : 'abort';
          if (!(await signalOpenRun(() => handle.signal(cancelSignal, { mode, reason: 'soak chaos' })))) return undefined;
          const closed = await poll(300_000, async () => {
            const d = await handle.describe().catch(() => undefined);
            return d && d.status.name !== 'RUNNING' ? d.status.name : undefined;
          });
          if (closed === undefined) throw new Error('the cancelled run did not close within 5 minutes');
          // A cancel closes the run as completed (stop reason `cancelled`); anything else is an aborted run.
          if (closed !== 'COMPLETED') result.aborted.push({ status: `${closed} (after a cancel, ${mode})`, at: (Date.now() - t0) / 1000 });
          return `cancel (${mode}) closed the run (${closed}); ${await continueRun()}`;
        } finally {
          continuing = false;
        }
      },
    };
    if (s.ownsServer) actions['restart-server'] = () => s.restartServer(choices.int(2_000, 8_000));
    if (o.config === 'sandbox') {
      actions['kill-container'] = async () => {
        // A container listed as running can end (its episode done) or be removed before the kill reaches it: it is
        // then no target, and the kill goes to the next one; with none left the event is skipped.
        const killed = await poll(15_000, async () => {
          for (const c of (await workflowContainers(workflowId)).filter((c) => c.State === 'running')) {
            try {
              await dockerClient().getContainer(c.Id).kill();
              return c.Id;
            } catch (err) {
              if (!containerGone(err)) throw err;
            }
          }
          return undefined;
        });
        return killed === undefined ? undefined : `container ${killed.slice(0, 12)} killed mid-episode`;
      };
    }
    const chosen: readonly string[] = o.chaos?.kinds ?? Object.keys(actions);
    const probe = prober;
    const pace = o.chaos?.minEvents === undefined ? undefined : { minEvents: o.chaos.minEvents, iterations: o.iterations, iterationsDone: () => probe.iterationsDone };
    const driver = o.chaos
      ? new ChaosDriver(mixSeed(o.seed, 1), Object.fromEntries(Object.entries(actions).filter(([k]) => chosen.includes(k))), o.chaos.intervalMs, t0, (line) => o.log(`[${o.label}] ${line}`), pace)
      : undefined;
    const chaos = driver?.run(() => finished);

    // Wait for the loop's end: a completed run that went all the way. A run that failed or was terminated is an
    // aborted run (counted) and is continued, so the soak measures the rest.
    const deadline = t0 + o.deadlineMs;
    let last = '';
    try {
      while (!finished) {
        if (Date.now() > deadline) throw new Error(`the loop did not finish within ${(o.deadlineMs / 60_000).toFixed(0)} minutes`);
        await new Promise((r) => setTimeout(r, 2000));
        if (continuing || s.state() === 'server-down') continue;
        try {
          const handle = (await client()).workflow.getHandle(workflowId);
          const d = await handle.describe();
          const status = d.status.name;
          if (status === 'RUNNING') continue;
          if (status === 'COMPLETED') {
            const r = (await handle.result()) as LoopResult;
            if (r.stopReason === 'max_iterations' || r.stopReason === 'target') {
              finished = true;
              result.stopReason = r.stopReason;
              result.history = r.history;
              if (d.closeTime) result.closedAtS = (d.closeTime.getTime() - t0) / 1000;
            } else if (!continuing) {
              // A cancel the driver is about to continue shows here for a moment; give it time.
              await new Promise((res) => setTimeout(res, 5_000));
            }
            continue;
          }
          result.aborted.push({ status, at: (Date.now() - t0) / 1000 });
          o.log(`[${o.label}] ABORTED: the run ended ${status}; continuing it`);
          o.log(`[${o.label}] ${await continueRun()}`);
        } catch (err) {
          const msg = fullMessage(err);
          if (msg !== last) o.log(`[${o.label}] (waiting: ${msg})`);
          last = msg;
        }
      }
    } finally {
      finished = true;
      await chaos;
    }
    result.wallMs = Date.now() - t0;
    o.log(`[${o.label}] loop ended (${String(result.stopReason)}) after ${(result.wallMs / 1000).toFixed(0)} s`);
    await prober.stop();

    const c = await client();
    for await (const e of c.workflow.list({ query: `WorkflowId = '${workflowId}'` })) {
      result.runs.push({ runId: e.runId, status: e.status.name, events: e.historyLength });
    }
    const store = await ArtifactStore.open({ root: join(dir, 'store') });
    result.lineage = await checkLineage(store, result.history, config, o.iterations, o.config === 'sandbox');
    result.events = driver?.events ?? [];
    result.faults = {
      judge: judge.tally,
      policy: proxy.tally,
      ...defined({ sandboxExec: workerEnv[FAULTS_ENV] === undefined ? undefined : { injected: result.lineage.injectedExecFaults } }),
    };
  } finally {
    result.samples = prober?.samples ?? [];
    await prober?.stop().catch(() => undefined);
    await connection?.close().catch(() => undefined);
    await stack?.stop().catch((err: unknown) => o.log(`[${o.label}] stopping the stack: ${fullMessage(err)}`));
    result.restarts = stack?.restarts ?? [];
    await judge.close();
    await proxy.close();
    // What the run left: processes naming the scratch directory (workers, trainers, policy servers, the server),
    // the workflow's containers, files in the workers' TMPDIR.
    await poll(20_000, () => (processesMentioning(dir).length === 0 ? true : undefined));
    result.leftovers.processes = processesMentioning(dir).map((pid) => `pid ${pid}`);
    result.leftovers.containers = o.config === 'sandbox' ? (await workflowContainers(workflowId, true).catch(() => [])).map((c) => c.Id.slice(0, 12)) : [];
    // Tools' own caches, kept on purpose across runs (as in /tmp): tsx's transpile cache (`tsx-<uid>`, the workers
    // run from the sources) and torch's compile cache (`torchinductor_<user>`). Anything else is a leftover.
    result.leftovers.tmpFiles = existsSync(tmp) ? readdirSync(tmp).filter((f) => !/^(tsx-\d+|torchinductor_.+)$/.test(f)) : [];
    if (o.keep) o.log(`[${o.label}] kept ${dir}`);
    else {
      await rm(dir, { recursive: true, force: true });
      result.leftovers.scratchDirRemoved = !existsSync(dir);
    }
  }
  return result;
}
