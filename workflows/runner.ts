/**
 * The machinery `pipeline` and `trainingLoop` share: the status behind `pipeline_status`, the `pause` /
 * `resume` / `cancel` handlers, running a stage as a cancellable scope, and the pass itself —
 * Task → Sandbox/Recorder (rollout shards) → Reward → Export → Train → (ONNX export) → Eval.
 *
 * Workflow code: deterministic, no Node built-ins, activities imported as types only.
 */
import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  CancelledFailure,
  condition,
  isCancellation,
  log,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setCurrentDetails,
  setHandler,
  upsertMemo,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { SearchAttributeUpdatePair } from '@temporalio/common';
import type { PipelineActivities } from '../activities/index.js';
import type { JudgeRolloutsResult } from '../activities/reward.js';
import { DEFAULT_TASK_QUEUES, type PipelineConfig } from '../src/loop/config.js';
import {
  benchmarkEval,
  benchmarkUsesPolicy,
  evaluatesPolicy,
  iterationSeed,
  needsOnnxPolicy,
  overlapsNextCollection,
  phaseOf,
  planShards,
  refsToPrune,
  servedPolicy,
  stalenessRule,
  type ServedPolicy,
} from '../src/loop/plan.js';
import { SearchAttributeKeys } from '../src/loop/search-attributes.js';
import {
  benchmarkNote,
  bestOf,
  evalNote,
  freshStages,
  judgeNote,
  loopScalars,
  STAGES,
  trainMetrics,
  trainNumbers,
  type BenchmarkMetrics,
  type CancelStatus,
  type ForkedFrom,
  type IterationMetrics,
  type PendingRollouts,
  type PipelineStatus,
  type PolicyState,
  type ReusedRollouts,
  type StageName,
  type StageStatus,
} from '../src/loop/status.js';
import {
  AWAIT_SERVER_OPTIONS,
  CHECK_OPTIONS,
  CURVES_OPTIONS,
  EVAL_OPTIONS,
  GPU_SETUP_OPTIONS,
  JUDGE_OPTIONS,
  LOCAL_SHARD_OPTIONS,
  SERVE_OPTIONS,
  SHARD_OPTIONS,
  STORE_OPTIONS,
  trainOptions,
} from './activity-options.js';
import { cancelSignal, pauseSignal, pipelineStatusQuery, resumeSignal, stageProgressSignal, type CancelRequest, type StageProgress } from './messages.js';
import { defined } from '../src/core/defined.js';
import { activitySummary, currentDetails, plural } from '../src/loop/summaries.js';
import { allOrNone } from './all-or-none.js';
import { summarised } from './summarised.js';

/**
 * Keeps the run's current details (`currentDetails`, src/loop/summaries.ts), which the Web UI shows, in step with the
 * status `status` returns: the workflow's runner of the moment, which setup replaces. Setting them writes nothing to
 * the history (the UI reads them with a query), so replay is unaffected and no patch is needed. It waits outside any
 * cancellation (a cancelled run still says so) and never ends: the workflow's end drops it.
 */
export function followCurrentDetails(status: () => PipelineStatus): void {
  const render = (): string => currentDetails(status());
  void CancellationScope.nonCancellable(async () => {
    for (;;) {
      const shown = render();
      setCurrentDetails(shown);
      await condition(() => render() !== shown);
    }
  });
}

/** What an evaluation adds to an iteration's metrics. */
type EvalNumbers = Pick<IterationMetrics, 'success' | 'evalReward' | 'evalSteps' | 'passK' | 'calibrationError' | 'benchmarks'>;

/** An evaluation's numbers as an iteration's metrics carry them: those it did not measure are left out. */
function evalMetrics(ev: EvalNumbers): EvalNumbers {
  return defined({ success: ev.success, evalReward: ev.evalReward, evalSteps: ev.evalSteps, passK: ev.passK, calibrationError: ev.calibrationError, benchmarks: ev.benchmarks });
}

/**
 * Fails the run at once, without retries, when its input is not a configuration object (`temporal workflow
 * start` with no input, `null`, a string): the handlers and the setup read its fields before the
 * configuration check runs as an activity, and a TypeError there would fail every workflow task, forever.
 */
export function requireConfigObject(config: unknown, workflow: string): asserts config is PipelineConfig {
  if (typeof config === 'object' && config !== null && !Array.isArray(config)) return;
  const got = config === undefined ? 'no input' : config === null ? 'null' : Array.isArray(config) ? 'an array' : `a ${typeof config}`;
  throw ApplicationFailure.create({ message: `${workflow} input [0] $: expected the pipeline configuration (a JSON object), got ${got}`, type: 'CONFIG_ERROR', nonRetryable: true });
}

/** Whether a `stage_progress` payload has the fields the status copies (a hand-sent signal may not). */
function isStageProgress(p: unknown, stages: PipelineStatus['stages']): p is StageProgress {
  if (typeof p !== 'object' || p === null) return false;
  const q = p as Record<string, unknown>;
  return typeof q.stage === 'string' && Object.hasOwn(stages, q.stage) && typeof q.done === 'number' && typeof q.total === 'number' && typeof q.unit === 'string';
}

/** The mode of a `cancel` request; a missing or unknown one (a hand-sent signal) is the graceful `finish`. */
function cancelMode(request: CancelRequest | undefined): CancelStatus['mode'] {
  const mode: unknown = request?.mode;
  if (mode === 'finish' || mode === 'abort') return mode;
  if (mode !== undefined) log.warn(`cancel: unknown mode ${JSON.stringify(mode)}; finishing gracefully (modes: finish, abort)`);
  return 'finish';
}

/** Thrown inside a workflow when a `cancel` signal stops it; caught at the top to complete gracefully. */
export class PipelineStopped extends Error {
  constructor() {
    super('stopped by a cancel signal');
    this.name = 'PipelineStopped';
  }
}

/** The activity bindings of one configuration, one per timeout/retry policy (see activity-options.ts). */
function bindActivities(config: PipelineConfig, trainTimeout: string, trainHeartbeatTimeout?: string, shardHeartbeatTimeout?: string) {
  const cpu = config.task_queues.cpu;
  const gpu = config.task_queues.gpu;
  const checks = proxyActivities<PipelineActivities>({ ...CHECK_OPTIONS, taskQueue: cpu });
  const gpuChecks = proxyActivities<PipelineActivities>({ ...CHECK_OPTIONS, taskQueue: gpu });
  const store = proxyActivities<PipelineActivities>({ ...STORE_OPTIONS, taskQueue: cpu });
  const judge = proxyActivities<PipelineActivities>({ ...JUDGE_OPTIONS, taskQueue: cpu });
  const shards = proxyActivities<PipelineActivities>({ ...SHARD_OPTIONS, ...defined({ heartbeatTimeout: shardHeartbeatTimeout }), taskQueue: cpu });
  const localShards = proxyLocalActivities<PipelineActivities>(LOCAL_SHARD_OPTIONS);
  // The evaluation runs episodes like a shard and heartbeats like one (every quarter of its timeout): a lost CPU worker
  // is noticed after `eval.heartbeat_timeout`, else the collection's, not after EVAL_OPTIONS' 5 minutes. Neither set:
  // what configurations always scheduled (replay).
  const evals = proxyActivities<PipelineActivities>({ ...EVAL_OPTIONS, ...defined({ heartbeatTimeout: config.eval.heartbeat_timeout ?? shardHeartbeatTimeout }), taskQueue: cpu });
  const gpuSetup = proxyActivities<PipelineActivities>({ ...GPU_SETUP_OPTIONS, taskQueue: gpu });
  const train = proxyActivities<PipelineActivities>({ ...trainOptions(trainTimeout, trainHeartbeatTimeout), taskQueue: gpu });
  const serve = proxyActivities<PipelineActivities>({ ...SERVE_OPTIONS, taskQueue: gpu });
  const awaitServer = proxyActivities<PipelineActivities>({ ...AWAIT_SERVER_OPTIONS, taskQueue: cpu });
  const curves = proxyActivities<PipelineActivities>({ ...CURVES_OPTIONS, taskQueue: gpu });
  return {
    checkConfig: checks.checkConfig,
    checkTrainerConfigs: gpuChecks.checkTrainerConfigs,
    planTasks: store.planTasks,
    collectShard: shards.collectShard,
    collectShardLocally: localShards.collectShard,
    judgeRollouts: judge.judgeRollouts,
    scoreRollouts: store.scoreRollouts,
    exportTrainingData: store.exportTrainingData,
    evaluatePolicy: evals.evaluatePolicy,
    pruneModels: store.pruneModels,
    preparePolicy: gpuSetup.preparePolicy,
    exportPolicy: gpuSetup.exportPolicy,
    train: train.train,
    servePolicy: serve.servePolicy,
    awaitPolicyServer: awaitServer.awaitPolicyServer,
    writeLoopCurves: curves.writeLoopCurves,
  };
}

/** The failure's innermost message and type (an activity's ApplicationFailure inside its ActivityFailure). */
function describeFailure(err: unknown): { message: string; type?: string } {
  let e: unknown = err;
  while (e instanceof ActivityFailure && e.cause) e = e.cause;
  if (e instanceof ApplicationFailure) return { message: e.message, ...(e.type ? { type: e.type } : {}) };
  if (e instanceof Error) return { message: e.message, type: e.name };
  return { message: String(e) };
}

/** Where a stage runs: in this iteration's pass, or in the next iteration's collection beside it (`rl.async`). */
type Lane = 'pass' | 'next';
/** The stages of the next iteration's collection. */
type NextStage = 'tasks' | 'collect';

/** The workflow's view of one run: status, handlers and the stages. */
export class PipelineRunner {
  readonly status: PipelineStatus;
  private scope: CancellationScope | undefined;
  private running: StageName | undefined;
  private readonly shardProgress = new Map<string, number>();
  /** Asynchronous RL: the stage of the next iteration's collection running beside this pass, and its scope. */
  private nextScope: CancellationScope | undefined;
  private nextRunning: NextStage | undefined;
  private readonly nextShardProgress = new Map<string, number>();

  constructor(
    workflow: PipelineStatus['workflow'],
    readonly config: PipelineConfig,
    init: { iteration: number; policy: PolicyState; history: IterationMetrics[]; paused: boolean; run: number; loopStartedAt: string; forkedFrom?: ForkedFrom | undefined },
  ) {
    const now = new Date().toISOString();
    this.status = {
      workflow,
      experiment: config.name,
      env: config.env,
      state: 'starting',
      stage: 'setup',
      iteration: init.iteration,
      maxIterations: config.max_iterations,
      paused: init.paused,
      stages: freshStages(),
      artifacts: {},
      policy: init.policy,
      history: init.history,
      run: init.run,
      runStartedAt: now,
      loopStartedAt: init.loopStartedAt,
    };
    const best = bestOf(init.history);
    if (best) this.status.best = best;
    if (init.forkedFrom !== undefined) this.status.forkedFrom = init.forkedFrom;

    setHandler(pipelineStatusQuery, () => this.snapshot());
    setHandler(pauseSignal, () => {
      this.status.paused = true;
      if (this.status.state === 'running') this.status.state = 'paused';
    });
    setHandler(resumeSignal, () => {
      this.status.paused = false;
      if (this.status.state === 'paused') this.status.state = 'running';
    });
    setHandler(cancelSignal, (request) => {
      const mode = cancelMode(request);
      const earlier = this.status.cancel;
      if (earlier) {
        // A graceful cancel can still become an abort (a long training the user stops waiting for); any
        // other repeat changes nothing. Histories from before this rule ignored every repeat.
        if (earlier.mode === 'finish' && mode === 'abort' && patched('cancel-finish-escalates-to-abort')) {
          earlier.mode = 'abort';
          earlier.escalatedAt = new Date().toISOString();
          this.scope?.cancel();
          this.nextScope?.cancel();
        }
        return;
      }
      const cancel: CancelStatus = { mode, requestedAt: new Date().toISOString() };
      if (typeof request?.reason === 'string') cancel.reason = request.reason;
      const running = this.running ?? this.nextRunning;
      if (running) cancel.stage = running;
      else cancel.activity = 'none';
      this.status.cancel = cancel;
      this.status.state = 'cancelling';
      if (cancel.mode === 'abort') {
        this.scope?.cancel();
        this.nextScope?.cancel();
      }
    });
    setHandler(stageProgressSignal, (p: unknown) => {
      // A malformed payload (a hand-sent signal) is dropped: throwing here would fail every workflow task.
      if (!isStageProgress(p, this.status.stages)) {
        log.warn(`stage_progress: ignored a payload without stage, done, total and unit: ${JSON.stringify(p) ?? 'nothing'}`);
        return;
      }
      // The pass's own stage, else (asynchronous RL) the next iteration's collection beside it.
      const next = this.running !== p.stage && this.nextRunning === p.stage ? this.status.next : undefined;
      if (this.running !== p.stage && next === undefined) return; // a late signal of a finished stage
      const stage = next === undefined ? this.status.stages[p.stage] : next.stages[p.stage as NextStage];
      const shardProgress = next === undefined ? this.shardProgress : this.nextShardProgress;
      if (p.stage === 'collect' && p.key !== undefined) {
        // Shards report their own episodes; the stage's progress is their sum.
        shardProgress.set(p.key, p.done);
        const done = [...shardProgress.values()].reduce((a, b) => a + b, 0);
        stage.progress = { done, total: stage.progress?.total ?? p.total, unit: p.unit };
      } else {
        stage.progress = { done: p.done, total: p.total, unit: p.unit };
      }
      if (p.note !== undefined) stage.note = p.note;
    });
  }

  /** The status as the query returns it (with the running stage's duration so far). */
  snapshot(): PipelineStatus {
    const s: PipelineStatus = { ...this.status, stages: { ...this.status.stages } };
    if (this.running) {
      const st = { ...s.stages[this.running] };
      if (st.startedAt) st.durationMs = Date.now() - Date.parse(st.startedAt);
      s.stages[this.running] = st;
      if (st.progress) s.progress = st.progress;
    }
    if (this.status.next !== undefined) {
      const stages = { ...this.status.next.stages };
      const st = this.nextRunning === undefined ? undefined : { ...stages[this.nextRunning] };
      if (st?.startedAt && this.nextRunning !== undefined) {
        st.durationMs = Date.now() - Date.parse(st.startedAt);
        stages[this.nextRunning] = st;
      }
      s.next = { ...this.status.next, stages };
    }
    return s;
  }

  /** Whether a `cancel` came. */
  get cancelRequested(): boolean {
    return this.status.cancel !== undefined;
  }

  /** Waits while paused; throws {@link PipelineStopped} when a cancel came (before the next activity). */
  async gate(): Promise<void> {
    if (this.status.paused && !this.cancelRequested) {
      this.status.state = 'paused';
      await condition(() => !this.status.paused || this.cancelRequested);
    }
    if (this.cancelRequested) throw new PipelineStopped();
    this.status.state = 'running';
  }

  /**
   * Runs one stage: waits at the gate (pause/cancel), marks it running, runs `fn` in a cancellable scope
   * (an `abort` cancel cancels it), and records the outcome. A stage that finishes while a `finish` cancel
   * waits for it is recorded as done, and the run stops after it.
   */
  async stage<T>(name: StageName, fn: () => Promise<T>, total?: { total: number; unit: string }, lane: Lane = 'pass'): Promise<T> {
    await this.gate();
    const next = lane === 'next' ? this.status.next : undefined;
    if (lane === 'next' && (next === undefined || (name !== 'tasks' && name !== 'collect'))) throw new Error(`stage ${name}: no next-iteration collection to run it in`);
    const st = next === undefined ? this.status.stages[name] : next.stages[name as NextStage];
    st.state = 'running';
    st.startedAt = new Date().toISOString();
    if (total) st.progress = { done: 0, ...total };
    if (next === undefined) {
      this.status.stage = name;
      this.running = name;
      this.shardProgress.clear();
    } else {
      this.nextRunning = name as NextStage;
      this.nextShardProgress.clear();
    }
    const started = Date.now();
    let scope: CancellationScope | undefined;
    try {
      const result = await CancellationScope.cancellable(async () => {
        scope = CancellationScope.current();
        if (next === undefined) this.scope = scope;
        else this.nextScope = scope;
        return fn();
      });
      st.state = 'done';
      st.durationMs = Date.now() - started;
      if (this.status.cancel && this.status.cancel.activity === undefined) this.status.cancel.activity = 'finished';
      return result;
    } catch (err) {
      st.durationMs = Date.now() - started;
      // A stage cancelled while its activity's worker was gone ends when that attempt times out (no worker could report
      // the cancellation, and the server retries nothing once a cancel is requested): cancelled all the same, the
      // timeout kept in its note. Before the patch such a run failed.
      const abortedAnyway = !isCancellation(err) && scope?.consideredCancelled === true && patched('cancelled-stage-ends-cancelled');
      if (abortedAnyway) st.note = `cancelled; its activity ended with: ${describeFailure(err).message}`;
      if (isCancellation(err) || abortedAnyway) {
        st.state = 'cancelled';
        if (this.status.cancel) {
          this.status.cancel.activity = 'cancelled';
          throw new PipelineStopped();
        }
        if (next === undefined) this.status.state = 'cancelled';
        throw abortedAnyway ? new CancelledFailure(`stage ${name} cancelled`, [], err instanceof Error ? err : undefined) : err;
      }
      st.state = 'failed';
      const failure = describeFailure(err);
      this.status.lastError = { stage: name, message: failure.message, at: new Date().toISOString(), ...(failure.type ? { type: failure.type } : {}) };
      // The next iteration's collection failing does not fail the run (that iteration then collects for itself).
      if (next === undefined) this.status.state = 'failed';
      // Surface the activity's own message (it names the field) as the workflow's failure.
      throw ApplicationFailure.create({ message: `${name}: ${failure.message}`, type: failure.type ?? 'STAGE_FAILED', nonRetryable: true, ...(err instanceof Error ? { cause: err } : {}) });
    } finally {
      if (next === undefined) {
        this.running = undefined;
        this.scope = undefined;
      } else {
        this.nextRunning = undefined;
        this.nextScope = undefined;
      }
    }
  }

  /** Marks a stage skipped with a note. */
  skip(name: StageName, note: string): void {
    this.status.stages[name] = { state: 'skipped', note };
  }

  /** Records a setup failure (before any stage); returns what to throw as the workflow's failure. */
  setupFailure(err: unknown): unknown {
    if (isCancellation(err)) return err;
    const failure = describeFailure(err);
    this.status.lastError = { stage: 'setup', message: failure.message, at: new Date().toISOString(), ...(failure.type ? { type: failure.type } : {}) };
    this.status.state = 'failed';
    return ApplicationFailure.create({ message: failure.message, type: failure.type ?? 'SETUP_FAILED', nonRetryable: true, ...(err instanceof Error ? { cause: err } : {}) });
  }

  // -------------------------------------------------------------------------------------------------------
  // Setup, baseline and the pass

  /**
   * Validates the configuration (schema, env, agents, profile on the CPU queue; trainer configs on the GPU
   * queue) and prepares the initial policy. Returns the validated configuration and the policy.
   */
  static async setup(raw: PipelineConfig): Promise<PipelineConfig> {
    // A hand-written input may lack the defaults the check fills in, the task queues included.
    const cpu: unknown = (raw as { task_queues?: { cpu?: unknown } }).task_queues?.cpu;
    const { checkConfig } = proxyActivities<PipelineActivities>({
      ...CHECK_OPTIONS,
      taskQueue: typeof cpu === 'string' && cpu !== '' ? cpu : DEFAULT_TASK_QUEUES.cpu,
      summary: 'setup · check the configuration',
    });
    return checkConfig(raw);
  }

  /** Trainer configuration checks: every phase's `train.config`, by the trainer on the GPU queue. */
  async checkTrainers(): Promise<void> {
    const a = bindActivities(this.config, '1h');
    const single = this.config.phases.length === 1 && this.config.phases[0]?.name === 'main';
    await summarised(a.checkTrainerConfigs, this.summary('setup · check the trainer configurations'))({
      phases: this.config.phases.map((p, i) => ({ field: single ? '$.train.config' : `$.phases[${i}].train.config`, command: p.train.command, config: p.train.config })),
    });
  }

  /** Trainer configuration checks and the initial policy (ONNX-exported when the loop acts with it). */
  async preparePolicy(): Promise<PolicyState> {
    await this.checkTrainers();
    const a = bindActivities(this.config, '1h');
    const policy: PolicyState = await summarised(a.preparePolicy, this.summary('setup · prepare the initial policy'))({ experiment: this.config.name, init: this.config.policy.init, env: this.config.env, ...this.where() });
    if (this.config.policy.agent !== undefined) policy.agent = this.config.policy.agent;
    else if (needsOnnxPolicy(this.config)) policy.onnxRef = (await summarised(a.exportPolicy, this.summary('setup · export the initial policy (ONNX)'))({ experiment: this.config.name, policy, ...this.where() })).onnxRef;
    this.status.policy = policy;
    return policy;
  }

  /** An activity's one-line summary for the Web UI: iteration (default the current one), `what`, environment. */
  private summary(what: string, iteration = this.status.iteration, env = this.config.env): string {
    return activitySummary({ iteration, what, env });
  }

  private where(): { store?: string; workDir?: string } {
    return defined({ store: this.config.store, workDir: this.config.work_dir });
  }

  /** Search attributes and memo of this run (names in search-attributes.ts). */
  publish(extra: { algorithm?: string; iteration: number }): void {
    const pairs: SearchAttributeUpdatePair[] = [
      { key: SearchAttributeKeys.experiment, value: this.config.name },
      { key: SearchAttributeKeys.env, value: this.config.env },
      { key: SearchAttributeKeys.iteration, value: extra.iteration },
    ];
    if (extra.algorithm !== undefined) pairs.push({ key: SearchAttributeKeys.algorithm, value: extra.algorithm });
    const best = bestOf(this.status.history);
    if (best) pairs.push({ key: SearchAttributeKeys.bestSuccess, value: best.success });
    upsertSearchAttributes(pairs);
    upsertMemo({ experiment: this.config.name, env: this.config.env, iteration: extra.iteration, bestSuccess: best?.success ?? null, algorithm: extra.algorithm ?? null });
  }

  /**
   * The evaluation stage of `policy`, as iteration metrics: the main evaluation, then each of `eval.benchmarks` in
   * order (the same activity, its own environment). A benchmark that fails through its retries is recorded with its
   * error and the loop goes on; the main evaluation's failure fails the stage.
   */
  private async evaluate(
    policy: PolicyState,
    iteration: number,
  ): Promise<EvalNumbers & { ref: string }> {
    const a = bindActivities(this.config, '1h');
    const { benchmarks, ...ev } = this.config.eval;
    const { result, extra } = await this.stage('eval', () =>
      this.withServedPolicy('eval', policy, evaluatesPolicy(this.config), async (served) => {
        const main = summarised(a.evaluatePolicy, this.summary('eval', iteration))({
          envId: this.config.env,
          policy,
          eval: ev,
          ...defined({ served: ev.agent === undefined ? served : undefined }),
          name: `${this.config.name}/iter-${iteration}/eval`,
          ...this.where(),
        });
        // Configurations without benchmarks schedule exactly what they did before benchmarks existed.
        if (benchmarks === undefined) return { result: await main, extra: undefined };
        const result = await main;
        const extra: Record<string, BenchmarkMetrics> = {};
        for (const b of benchmarks) {
          const { envId, eval: section } = benchmarkEval(this.config, b);
          this.status.stages.eval.note = `${evalNote(result)}; benchmark ${b.name}…`;
          try {
            const r = await summarised(a.evaluatePolicy, this.summary(`eval benchmark ${b.name}`, iteration, envId))({
              envId,
              policy,
              eval: section,
              ...defined({ served: benchmarkUsesPolicy(this.config, b) ? served : undefined }),
              name: `${this.config.name}/iter-${iteration}/eval-${b.name}`,
              ...this.where(),
            });
            extra[b.name] = { success: r.success, evalReward: r.meanReward, evalSteps: r.meanSteps, ...defined({ passK: r.passK, calibrationError: r.calibrationError }), ref: r.ref };
          } catch (err) {
            if (isCancellation(err)) throw err;
            const message = describeFailure(err).message;
            log.warn(`benchmark ${b.name} of iteration ${iteration} failed: ${message}`);
            extra[b.name] = { error: message };
          }
        }
        return { result, extra };
      }),
    );
    this.status.stages.eval.ref = result.ref;
    this.status.stages.eval.note = [evalNote(result), ...Object.entries(extra ?? {}).map(([name, b]) => benchmarkNote(name, b))].join('; ');
    this.status.artifacts.eval = result.ref;
    return {
      success: result.success,
      evalReward: result.meanReward,
      evalSteps: result.meanSteps,
      ...defined({ passK: result.passK, calibrationError: result.calibrationError, benchmarks: extra }),
      ref: result.ref,
    };
  }

  /**
   * Prunes the models `retention` lets go after the iterations in `history` ({@link refsToPrune}); the status's
   * `retention` says what went. A failure is recorded there, never fatal: the loop goes on with the models kept.
   */
  async retain(history: IterationMetrics[]): Promise<void> {
    const retention = this.config.retention;
    if (retention === undefined) return;
    const refs = refsToPrune(history, retention);
    if (refs.length === 0) return;
    const a = bindActivities(this.config, '1h');
    try {
      this.status.retention = { pruned: (await summarised(a.pruneModels, this.summary('prune models'))({ refs, ...this.where() })).pruned };
    } catch (err) {
      if (isCancellation(err)) throw err;
      this.status.retention = { pruned: [], error: describeFailure(err).message };
    }
  }

  /**
   * Appends an iteration's numbers to the loop's TensorBoard curves under `dir` (activities/curves.ts). Curves are
   * a convenience: a failure is logged and the loop goes on.
   */
  async writeCurves(dir: string, metrics: IterationMetrics): Promise<void> {
    const a = bindActivities(this.config, '1h');
    try {
      await summarised(a.writeLoopCurves, this.summary('TensorBoard curves', metrics.iteration))({ dir, experiment: this.config.name, iteration: metrics.iteration, scalars: loopScalars(metrics) });
    } catch (err) {
      if (isCancellation(err)) throw err;
      log.warn(`TensorBoard curves of iteration ${metrics.iteration} not written: ${describeFailure(err).message}`);
    }
  }

  /**
   * Runs a stage's `act` with the policy served, when `uses` and `policy.serve` say so (activities/serve.ts):
   * `servePolicy` on the GPU queue and `awaitPolicyServer` in a scope of their own, then `act` with the
   * endpoint. However `act` ends, the scope is cancelled and the server's end awaited, so the GPU is free
   * when the workflow moves on. A server gone for good before `act` ends fails the stage with its error.
   */
  private async withServedPolicy<T>(stage: StageName, policy: PolicyState, uses: boolean, act: (served: ServedPolicy | undefined) => Promise<T>): Promise<T> {
    const serve = this.config.policy.serve;
    const served = uses ? servedPolicy(this.config, policy) : undefined;
    if (served === undefined || serve === undefined) return act(undefined);
    const a = bindActivities(this.config, '1h');
    this.status.stages[stage].note = `starting the policy server: ${served.model} at ${served.baseURL}`;
    const scope = new CancellationScope();
    const serving = scope.run(() => summarised(a.servePolicy, this.summary(`${stage} · serve the policy ${served.model}`))({ policy, served, serve, ...this.where() }));
    const gone = serving.then((): never => {
      throw ApplicationFailure.create({ message: `the policy server ${served.model} exited while the ${stage} stage still needed it`, type: 'SERVER_EXITED', nonRetryable: true });
    });
    gone.catch(() => undefined);
    try {
      await Promise.race([scope.run(() => summarised(a.awaitPolicyServer, this.summary(`${stage} · wait for the policy server`))({ served })), gone]);
      this.status.stages[stage].note = `policy served: ${served.model} at ${served.baseURL}`;
      return await Promise.race([act(served), gone]);
    } finally {
      scope.cancel();
      await serving.catch(() => undefined);
    }
  }

  /** Iteration 0: the initial policy evaluated. */
  async baseline(policy: PolicyState): Promise<IterationMetrics> {
    const started = Date.now();
    this.status.stage = 'baseline';
    for (const s of ['tasks', 'collect', 'reward', 'export', 'train', 'policy'] as const) this.skip(s, 'baseline: evaluation only');
    const ev = await this.evaluate(policy, 0);
    return {
      iteration: 0,
      phase: 'baseline',
      algorithm: 'baseline',
      ...evalMetrics(ev),
      wallMs: Date.now() - started,
      refs: { eval: ev.ref, ...(policy.onnxRef ? { policy: policy.onnxRef } : {}), ...(policy.checkpointRef ? { checkpoint: policy.checkpointRef } : {}) },
    };
  }

  /**
   * One pass of iteration `iteration` from `policy`; returns its metrics and the new policy. With `reuse` (a forked
   * loop's first iteration, src/loop/fork.ts) the stored rollouts are scored again instead of planning tasks and
   * collecting; with `forkedFrom`, the iteration's scored set records it in its metadata. Asynchronous RL
   * (`rl.async`): with `pending`, the rollouts collected beside the previous iteration's training are scored instead;
   * with `overlap` (the training loop), the next iteration's collection runs beside this one's training and its
   * rollouts are returned as `pending`.
   */
  async pass(
    iteration: number,
    policy: PolicyState,
    fork: { reuse?: ReusedRollouts | undefined; forkedFrom?: ForkedFrom | undefined; pending?: PendingRollouts | undefined; overlap?: boolean } = {},
  ): Promise<{ metrics: IterationMetrics; policy: PolicyState; pending?: PendingRollouts }> {
    const config = this.config;
    const { phase } = phaseOf(config, iteration);
    // `heartbeat_timeout` is absent from configurations parsed before it existed (replayed histories): trainOptions' default then.
    const a = bindActivities(config, phase.train.timeout, phase.train.heartbeat_timeout as string | undefined, phase.collect.heartbeat_timeout);
    const started = Date.now();
    const refs: IterationMetrics['refs'] = {};
    this.status.phase = phase.name;
    this.status.algorithm = phase.train.command;
    const seed = iterationSeed(config.seed, iteration);
    const c = phase.collect;
    // Rollouts may come from a variant of the env (the same task ids); evaluation always uses `config.env`.
    const envId = c.env ?? config.env;

    const rollouts =
      fork.reuse !== undefined
        ? this.reuseRollouts(fork.reuse, refs)
        : fork.pending !== undefined
          ? this.usePending(fork.pending, refs)
          : await this.collectRollouts(a, iteration, policy, refs, 'pass');

    // The judge runs as its own activity, only when `reward.judge` is set: other configurations schedule what they always did.
    let judged: JudgeRolloutsResult | undefined;
    const scored = await this.stage('reward', async () => {
      if (config.reward.judge !== undefined) {
        judged = await summarised(a.judgeRollouts, this.summary('reward · judge', iteration, envId))({ envId, shards: rollouts, reward: config.reward, name: `${config.name}/iter-${iteration}/judgements`, ...this.where() });
        this.status.stages.reward.note = judgeNote(judged);
      }
      return summarised(a.scoreRollouts, this.summary(`reward · score ${plural(rollouts.length, 'shard')}`, iteration, envId))({
        envId,
        shards: rollouts,
        reward: config.reward,
        ...defined({ judgements: judged?.ref }),
        name: `${config.name}/iter-${iteration}/rollouts`,
        ...defined({ meta: fork.forkedFrom === undefined ? undefined : { forkedFrom: fork.forkedFrom } }),
        ...this.where(),
      });
    });
    refs.rollouts = refs.scored = this.status.artifacts.scored = this.status.stages.reward.ref = scored.ref;
    this.status.stages.reward.note = `success ${scored.summary.successRate.toFixed(3)}, mean reward ${scored.summary.meanReward.toFixed(3)}${judged !== undefined ? `; ${judgeNote(judged)}` : ''}`;

    const e = phase.export;
    const single = config.phases.length === 1 && phase.name === 'main';
    const dataset = await this.stage('export', () =>
      summarised(a.exportTrainingData, this.summary(`export ${e.format}`, iteration))({
        setRef: scored.ref,
        export: e,
        field: single ? '$.export' : `$.phases[${phaseOf(config, iteration).index}].export`,
        name: `${config.name}/iter-${iteration}/dataset`,
        seed,
        // Asynchronous RL only: other configurations schedule what they always did.
        ...defined({ staleness: stalenessRule(config, iteration, policy) }),
        ...this.where(),
      }),
    );
    refs.dataset = this.status.artifacts.dataset = this.status.stages.export.ref = dataset.ref;
    const stale = dataset.staleness;
    this.status.stages.export.note =
      `${dataset.records} ${e.format} records from ${dataset.input} trajectories` +
      (stale === undefined ? '' : `; staleness ≤ ${stale.maxSeen}${stale.dropped > 0 ? `, ${stale.dropped} stale dropped` : ''}`);

    // Asynchronous RL: the next iteration's collection runs beside this one's training, acting with the newest
    // checkpoint there is (this iteration's starting policy).
    const trainAndEval = (): Promise<{ metrics: IterationMetrics; policy: PolicyState }> => this.trainAndEvaluate(a, iteration, policy, dataset.ref, refs, started, scored, stale, fork.pending);
    if (fork.overlap !== true || !overlapsNextCollection(config, iteration)) return trainAndEval();
    const [done, pending] = await this.beside(trainAndEval, () => this.collectNext(iteration + 1, policy));
    return { ...done, ...defined({ pending }) };
  }

  /** The Train, policy export and Eval stages of a pass, and the iteration's metrics. */
  private async trainAndEvaluate(
    a: ReturnType<typeof bindActivities>,
    iteration: number,
    policy: PolicyState,
    datasetRef: string,
    refs: IterationMetrics['refs'],
    started: number,
    scored: { summary: { episodes: number; successRate: number; meanReward: number; meanSteps: number } },
    stale: { maxSeen: number; dropped: number } | undefined,
    pending: PendingRollouts | undefined,
  ): Promise<{ metrics: IterationMetrics; policy: PolicyState }> {
    const config = this.config;
    const { phase } = phaseOf(config, iteration);
    const dataset = { ref: datasetRef };
    const trained = await this.stage('train', () =>
      summarised(a.train, this.summary(`train ${phase.train.command}`, iteration))({
        experiment: config.name,
        iteration,
        command: phase.train.command,
        config: phase.train.config,
        datasetRef: dataset.ref,
        policy,
        ...defined({ processes: phase.train.processes }),
        launcher: phase.train.launcher,
        ...this.where(),
      }),
    );
    refs.checkpoint = this.status.artifacts.checkpoint = this.status.stages.train.ref = trained.checkpointRef;
    this.status.stages.train.note = `${trained.steps} steps${trainNumbers(trained)}${trained.resumedFrom ? `, resumed from ${trained.resumedFrom}` : ''}`;
    const next: PolicyState = { checkpointRef: trained.checkpointRef, iteration };

    if (needsOnnxPolicy(config)) {
      const exported = await this.stage('policy', () => summarised(a.exportPolicy, this.summary('policy · export ONNX', iteration))({ experiment: config.name, policy: next, ...this.where() }));
      next.onnxRef = refs.policy = this.status.artifacts.policy = this.status.stages.policy.ref = exported.onnxRef;
    } else {
      this.skip('policy', config.policy.serve === undefined ? 'no stage acts with the policy (eval.agent is set and no phase collects with it)' : 'served by policy.serve for the stages that act with it');
    }
    this.status.policy = next;

    const ev = await this.evaluate(next, iteration);
    refs.eval = ev.ref;
    const metrics: IterationMetrics = {
      iteration,
      phase: phase.name,
      algorithm: phase.train.command,
      ...evalMetrics(ev),
      rollouts: { episodes: scored.summary.episodes, success: scored.summary.successRate, meanReward: scored.summary.meanReward, meanSteps: scored.summary.meanSteps },
      // RL's numbers are absent from the results of histories recorded before the trainer reported them
      train: trainMetrics(trained),
      ...defined({ staleness: stale === undefined ? undefined : { max: stale.maxSeen, dropped: stale.dropped, ...defined({ collectMs: pending?.collectMs }) } }),
      stageMs: this.stageTimes(),
      wallMs: Date.now() - started,
      refs,
    };
    return { metrics, policy: next };
  }

  /** Wall time of every stage of this pass that ran to its end. */
  private stageTimes(): Partial<Record<StageName, number>> {
    const out: Partial<Record<StageName, number>> = {};
    for (const name of STAGES) {
      const st = this.status.stages[name];
      if (st.state === 'done' && st.durationMs !== undefined) out[name] = st.durationMs;
    }
    return out;
  }

  /**
   * Runs `main` (this iteration's training and evaluation) and, beside it, `side` (the next iteration's collection),
   * in a scope of its own. The run waits for both. When `main` fails, `side` is cancelled (a graceful `cancel`: left to
   * finish its running stage) and awaited, and `main`'s error thrown; when `side` fails (or stops at a cancel), the result is `main`'s alone, the next iteration then
   * collecting for itself, and the failure is kept in the status's `next.error`.
   */
  private async beside<T, U>(main: () => Promise<T>, side: () => Promise<U>): Promise<[T, U | undefined]> {
    const scope = new CancellationScope();
    const sideDone = scope.run(side).then(
      (value) => ({ ok: true as const, value }),
      (err: unknown) => ({ ok: false as const, err }),
    );
    let result: T;
    try {
      result = await main();
    } catch (err) {
      // A graceful cancel lets the collection's running stage finish too (it stops at its next stage); anything
      // else stops it now.
      if (!(err instanceof PipelineStopped && this.status.cancel?.mode === 'finish')) scope.cancel();
      await sideDone;
      throw err;
    }
    const s = await sideDone;
    if (s.ok) return [result, s.value];
    if (!(s.err instanceof PipelineStopped) && !isCancellation(s.err)) {
      const message = describeFailure(s.err).message;
      if (this.status.next !== undefined) this.status.next.error = message;
      log.warn(`the collection of iteration ${this.status.next?.iteration ?? '?'} beside the training failed; it collects for itself: ${message}`);
    }
    return [result, undefined];
  }

  /**
   * Asynchronous RL: the Task and collect stages of iteration `iteration`, run beside the training of the iteration
   * before it with `policy` (the newest checkpoint there is), shown as the status's `next`; returns the rollouts for
   * the run of `iteration`.
   */
  private async collectNext(iteration: number, policy: PolicyState): Promise<PendingRollouts> {
    const { phase } = phaseOf(this.config, iteration);
    const a = bindActivities(this.config, phase.train.timeout, phase.train.heartbeat_timeout as string | undefined, phase.collect.heartbeat_timeout);
    this.status.next = { iteration, policyVersion: policy.iteration, stages: { tasks: { state: 'pending' }, collect: { state: 'pending' } } };
    const started = Date.now();
    const refs: IterationMetrics['refs'] = {};
    const shards = await this.collectRollouts(a, iteration, policy, refs, 'next');
    const episodes = this.status.next.stages.collect.progress?.total ?? 0;
    return { iteration, shards, tasks: refs.tasks as string, policyVersion: policy.iteration, episodes, collectMs: Date.now() - started };
  }

  /** Asynchronous RL: the rollouts collected beside the previous iteration's training, instead of the Task and collect stages. */
  private usePending(pending: PendingRollouts, refs: IterationMetrics['refs']): string[] {
    const when = `collected beside iteration ${pending.iteration - 1}'s training by policy version ${pending.policyVersion}`;
    this.status.stages.tasks = { state: 'skipped', note: when, ref: pending.tasks };
    this.status.stages.collect = { state: 'skipped', note: `${pending.episodes} episodes in ${pending.shards.length} shards ${when}, in ${Math.round(pending.collectMs / 1000)} s`, progress: { done: pending.episodes, total: pending.episodes, unit: 'episodes' } };
    refs.tasks = this.status.artifacts.tasks = pending.tasks;
    return pending.shards;
  }

  /** The Task and Sandbox/Recorder stages of a pass: the iteration's task plan, collected in shards; returns the shards' refs. */
  private async collectRollouts(a: ReturnType<typeof bindActivities>, iteration: number, policy: PolicyState, refs: IterationMetrics['refs'], lane: Lane): Promise<string[]> {
    const config = this.config;
    const { phase } = phaseOf(config, iteration);
    const seed = iterationSeed(config.seed, iteration);
    const c = phase.collect;
    const envId = c.env ?? config.env;
    // This pass's stages, or the next iteration's collection beside it (asynchronous RL).
    const stages = (): Record<NextStage, StageStatus> => (lane === 'next' && this.status.next !== undefined ? this.status.next.stages : this.status.stages);
    const plan = await this.stage('tasks', () => summarised(a.planTasks, this.summary(`tasks · plan ${plural(c.tasks, 'group')}`, iteration, envId))({ envId, ...defined({ envKwargs: c.env_kwargs }), split: c.split, groups: c.tasks, seed, ...this.where() }), undefined, lane);
    refs.tasks = stages().tasks.ref = plan.ref;
    if (lane === 'pass') this.status.artifacts.tasks = plan.ref;

    const shards = planShards(plan.tasks, c.shard_size, seed);
    // `shard_execution` is absent from configurations parsed before it existed (replayed histories): activities then.
    const collectShard = c.shard_execution === 'local' ? a.collectShardLocally : a.collectShard;
    const episodes = plan.tasks.length * c.group_size;
    let shardsDone = 0;
    const collectOne = (served: ServedPolicy | undefined) => async (shard: (typeof shards)[number], i: number) => {
      const r = await summarised(collectShard, this.summary(`collect shard ${i + 1}/${shards.length}`, iteration, envId))({
        envId,
        policy,
        collect: c,
        tasks: shard.tasks,
        seed: shard.seed,
        ...defined({ served }),
        parents: [plan.ref],
        ...this.where(),
      });
      shardsDone++;
      stages().collect.note = `${shardsDone}/${shards.length} shards`;
      return r;
    };
    const collected = await this.stage(
      'collect',
      () =>
        this.withServedPolicy('collect', policy, c.agent === 'policy', (served) =>
          // Histories recorded before the patch ended the stage at the first shard's failure, the others still running.
          patched('shards-end-together') ? allOrNone(shards, collectOne(served)) : Promise.all(shards.map(collectOne(served))),
        ),
      { total: episodes, unit: 'episodes' },
      lane,
    );
    stages().collect.progress = { done: episodes, total: episodes, unit: 'episodes' };
    return collected.map((s) => s.ref);
  }

  /** A forked loop's first iteration: its origin's rollouts instead of the Task and collect stages. */
  private reuseRollouts(reuse: ReusedRollouts, refs: IterationMetrics['refs']): string[] {
    const from = this.status.forkedFrom;
    const origin = from === undefined ? 'stored rollouts' : `the rollouts of iteration ${from.iteration} of ${from.workflowId}`;
    this.skip('tasks', `reused: ${origin}`);
    this.skip('collect', `reused ${reuse.ref.slice(0, 19)}: ${origin}, scored again`);
    if (reuse.tasks !== undefined) refs.tasks = this.status.artifacts.tasks = reuse.tasks;
    return [reuse.ref];
  }
}

