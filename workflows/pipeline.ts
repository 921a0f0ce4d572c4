/**
 * `pipeline(config, input?)`: one pass — Task → Sandbox/Recorder (rollout shards) → Reward → Export → Train
 * → (ONNX export) → Eval — from the initial policy or the one given. Same status query and signals as
 * `trainingLoop`; the loop runs this pass once per iteration.
 */
import { allHandlersFinished, condition } from '@temporalio/workflow';
import type { PipelineConfig } from '../src/loop/config.js';
import { phaseOf } from '../src/loop/plan.js';
import type { IterationMetrics, PolicyState, StopReason } from '../src/loop/status.js';
import { followCurrentDetails, PipelineRunner, PipelineStopped, requireConfigObject } from './runner.js';

/** Optional start point of a pass. */
export interface PassInput {
  /** Which iteration this pass is (selects the phase; default 1). */
  iteration?: number;
  /** Start from this policy instead of preparing `policy.init`. */
  policy?: PolicyState;
}

/** What a pass returns. */
export interface PassResult {
  stopReason: StopReason;
  metrics?: IterationMetrics;
  policy: PolicyState;
}

/** One pass of the pipeline (see the module comment). */
export async function pipeline(config: PipelineConfig, given: PassInput | null = {}): Promise<PassResult> {
  requireConfigObject(config, 'pipeline');
  const input = given ?? {}; // `[config, null]` from a hand-written input file: the defaults
  const iteration = input.iteration ?? 1;
  let runner = new PipelineRunner('pipeline', config, {
    iteration,
    policy: input.policy ?? { iteration: 0 },
    history: [],
    paused: false,
    run: 1,
    loopStartedAt: new Date().toISOString(),
  });
  followCurrentDetails(() => runner.status);
  try {
    let validated: PipelineConfig;
    try {
      validated = await PipelineRunner.setup(config);
    } catch (err) {
      throw runner.setupFailure(err);
    }
    const { paused, cancel } = runner.status;
    runner = new PipelineRunner('pipeline', validated, { iteration, policy: input.policy ?? { iteration: 0 }, history: [], paused, run: 1, loopStartedAt: runner.status.loopStartedAt });
    if (cancel) runner.status.cancel = cancel;
    await runner.gate();
    let policy: PolicyState;
    try {
      policy = input.policy ?? (await runner.preparePolicy());
    } catch (err) {
      throw runner.setupFailure(err);
    }
    runner.publish({ iteration, algorithm: phaseOf(validated, iteration).phase.train.command });
    const done = await runner.pass(iteration, policy);
    runner.status.history = [done.metrics];
    runner.status.stopReason = 'pass_done';
    runner.status.state = 'completed';
    runner.status.stage = 'done';
    await condition(allHandlersFinished);
    return { stopReason: 'pass_done', metrics: done.metrics, policy: done.policy };
  } catch (err) {
    if (!(err instanceof PipelineStopped)) throw err;
    runner.status.stopReason = 'cancelled';
    runner.status.state = 'cancelled';
    runner.status.stage = 'done';
    await condition(allHandlersFinished);
    return { stopReason: 'cancelled', policy: runner.status.policy };
  }
}
