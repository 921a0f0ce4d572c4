/**
 * `trainingLoop(config, state?)`: iterations of the pass (workflows/runner.ts), each run of the workflow
 * doing one — the baseline evaluation (iteration 0) or one training iteration — and handing over to the
 * next run with `continueAsNew`, carrying only refs and the compact metrics history (`LoopState`). It stops
 * when the target metric is reached, after `max_iterations`, or on a `cancel` signal. A state with `setupDone: false`
 * continues a closed run (`gymflow pipeline continue`) or starts a fork of one (`gymflow pipeline fork`, whose
 * state may carry the rollouts its first iteration scores again): the configuration is checked again, the policy kept.
 * With `rl.async` (asynchronous RL) a run also collects the next iteration's rollouts beside its training and hands
 * them over in the state (`pending`, refs only); the next run scores them instead of collecting.
 */
import { allHandlersFinished, condition, continueAsNew, patched } from '@temporalio/workflow';
import { defined } from '../src/core/defined.js';
import type { PipelineConfig } from '../src/loop/config.js';
import { phaseOf, tensorboardDirOf } from '../src/loop/plan.js';
import { bestOf, compactHistory, targetValue, type IterationMetrics, type LoopState, type PendingRollouts, type PolicyState, type StopReason } from '../src/loop/status.js';
import { followCurrentDetails, PipelineRunner, PipelineStopped, requireConfigObject } from './runner.js';

/** What a finished loop returns. */
export interface LoopResult {
  stopReason: StopReason;
  /** Training iterations done (the baseline, iteration 0, is not one). */
  iterations: number;
  history: IterationMetrics[];
  best?: { iteration: number; success: number };
  policy: PolicyState;
  /** Workflow runs the loop took (continueAsNew count + 1). */
  runs: number;
}

/**
 * The durable training loop (see the module comment). Start it with the validated configuration
 * (`loadPipelineConfig`) and no state; each later run receives the state its predecessor passed on.
 *
 * @example
 * ```ts
 * const handle = await client.workflow.start(trainingLoop, { taskQueue: 'gymflow', workflowId: 'demo-20250101-120000', args: [config] });
 * const status = await handle.query(pipelineStatusQuery);
 * ```
 */
export async function trainingLoop(config: PipelineConfig, state?: LoopState | null): Promise<LoopResult> {
  requireConfigObject(config, 'trainingLoop');
  // `temporal workflow start --input-file` with `[config, null]` starts afresh, like `[config]`.
  if (state === null) state = undefined;
  const first = state === undefined;
  let validated = config;
  const provisional: LoopState = state ?? {
    iteration: config.eval?.baseline === false ? 1 : 0,
    policy: { iteration: 0 },
    history: [],
    paused: false,
    runs: 0,
    loopStartedAt: new Date().toISOString(),
    setupDone: false,
  };
  // The runner (and so the query and signal handlers) exists before the first activity.
  let runner = new PipelineRunner('trainingLoop', config, { ...provisional, run: provisional.runs + 1 });
  followCurrentDetails(() => runner.status);
  const finish = async (stopReason: StopReason, s: LoopState): Promise<LoopResult> => {
    runner.status.stopReason = stopReason;
    runner.status.state = stopReason === 'cancelled' ? 'cancelled' : 'completed';
    runner.status.stage = 'done';
    await condition(allHandlersFinished);
    const best = bestOf(s.history);
    // `s.iteration` is the first iteration not done: the history is compacted past 200 entries, so it cannot be counted.
    return { stopReason, iterations: Math.max(0, s.iteration - 1), history: s.history, ...defined({ best }), policy: s.policy, runs: runner.status.run };
  };

  let loop = provisional;
  try {
    if (first) {
      try {
        validated = await PipelineRunner.setup(config);
      } catch (err) {
        throw runner.setupFailure(err);
      }
      // Defaults are filled in now: start over with the validated configuration, handlers included.
      const paused = runner.status.paused;
      const cancel = runner.status.cancel;
      runner = new PipelineRunner('trainingLoop', validated, { ...provisional, iteration: validated.eval.baseline ? 0 : 1, paused, run: 1 });
      if (cancel) runner.status.cancel = cancel;
      loop = { ...provisional, iteration: validated.eval.baseline ? 0 : 1, paused };
      runner.publish({ iteration: loop.iteration });
      await runner.gate();
      let policy: PolicyState;
      try {
        policy = await runner.preparePolicy();
      } catch (err) {
        throw runner.setupFailure(err);
      }
      loop = { ...loop, policy, setupDone: true };
    } else if (!loop.setupDone) {
      // Continued by `gymflow pipeline continue` (src/loop/continuation.ts), perhaps with an amended
      // configuration: its checks run again; the policy stays the one the continued run had reached.
      try {
        validated = await PipelineRunner.setup(config);
        const { paused, cancel } = runner.status;
        runner = new PipelineRunner('trainingLoop', validated, { ...loop, paused, run: loop.runs + 1 });
        if (cancel) runner.status.cancel = cancel;
        await runner.checkTrainers();
      } catch (err) {
        throw runner.setupFailure(err);
      }
      loop = { ...loop, paused: runner.status.paused, setupDone: true };
    }

    const iteration = loop.iteration;
    runner.status.iteration = iteration;
    let metrics: IterationMetrics;
    let policy = loop.policy;
    let nextPending: PendingRollouts | undefined;
    if (iteration === 0) {
      metrics = await runner.baseline(policy);
      runner.publish({ iteration: 0, algorithm: 'baseline' });
    } else {
      const { phase } = phaseOf(validated, iteration);
      runner.publish({ iteration, algorithm: phase.train.command });
      // A forked loop's first iteration (src/loop/fork.ts) may score its origin's rollouts instead of collecting.
      const forkStart = loop.forkedFrom !== undefined && iteration === loop.forkedFrom.iteration + 1;
      // Asynchronous RL: the rollouts the previous run collected beside its training, when they are this iteration's
      // and the (perhaps amended) configuration still runs asynchronously.
      const pending = !forkStart && validated.rl?.async !== undefined && loop.pending?.iteration === iteration ? loop.pending : undefined;
      const overlap = validated.rl?.async !== undefined;
      const done = forkStart
        ? await runner.pass(iteration, policy, { reuse: loop.reuseRollouts, forkedFrom: loop.forkedFrom, ...(overlap ? { overlap } : {}) })
        : await runner.pass(iteration, policy, { ...defined({ pending }), ...(overlap ? { overlap } : {}) });
      metrics = done.metrics;
      policy = done.policy;
      nextPending = done.pending;
    }
    const full = [...loop.history, metrics];
    const history = compactHistory(full);
    runner.status.history = history;
    const best = bestOf(history);
    if (best) runner.status.best = best;
    // Retention sees the iteration compaction is about to drop (a best just superseded), or its models would
    // never be pruned; histories recorded before this compacted first.
    await runner.retain(patched('retain-before-compacting') ? full : history);
    const curves = tensorboardDirOf(validated, iteration);
    if (curves !== undefined && patched('loop-curves')) await runner.writeCurves(curves, metrics);
    runner.publish({ iteration, ...(iteration === 0 ? { algorithm: 'baseline' } : { algorithm: phaseOf(validated, iteration).phase.train.command }) });

    // The reused rollouts served their one iteration (absent from every state but a fork's first); so did a pending
    // collection, replaced by the one collected beside this iteration's training, if any.
    const { reuseRollouts: _reused, pending: _pending, ...carried } = loop;
    const next: LoopState = { ...carried, iteration: iteration + 1, policy, history, paused: runner.status.paused, runs: loop.runs + 1, ...defined({ pending: nextPending }) };
    const target = validated.target;
    if (target !== undefined && iteration > 0) {
      const value = targetValue(metrics, target.metric);
      if (value !== undefined && value >= target.value) return await finish('target', next);
    }
    if (iteration >= validated.max_iterations) return await finish('max_iterations', next);
    // A cancel that came during the iteration's last stage: the iteration is done, and the result counts it.
    if (runner.cancelRequested) return await finish('cancelled', next);

    await condition(allHandlersFinished);
    // A pause or cancel that arrives between here and the next run is not lost: pause is carried in the
    // state, and the next run checks the gate before its first activity.
    return await continueAsNew<typeof trainingLoop>(validated, next);
  } catch (err) {
    if (err instanceof PipelineStopped) return await finish('cancelled', { ...loop, history: runner.status.history, policy: runner.status.policy });
    throw err;
  }
}
