/**
 * Continuing a closed `trainingLoop` run (`gymflow pipeline continue ID [CONFIG]`): the loop that failed on day
 * three (a trainer that ran out of memory, retries spent during an outage), was cancelled to change a setting, or
 * finished its iterations goes on from where it stopped, with its policy, metrics history and best iteration,
 * instead of starting over.
 *
 * Every run of a loop does one iteration and starts from the state its predecessor handed over (`LoopState`, the
 * second workflow argument). So a run that failed, or was cancelled, in iteration K is continued by starting the
 * loop again with the state its last run started from: iteration K runs again from the policy of iteration K-1.
 * A run that completed (`max_iterations`, `target`) is continued from the state it would have handed over:
 * iteration K+1 from its last policy. Either way the state is marked `setupDone: false`, so the new run checks the
 * configuration again (possibly amended) before its first activity, and keeps the policy (workflows/training-loop.ts).
 */
import { z } from 'zod';
import { ConfigError } from '../core/errors.js';
import { parsePipelineConfig, type PipelineConfig } from './config.js';
import type { IterationMetrics, LoopState, PolicyState, StopReason } from './status.js';

/** The parts of a `LoopState` a continuation relies on; the rest is passed on as it came. */
const LoopStateShape = z.looseObject({
  iteration: z.number().int().nonnegative(),
  policy: z.looseObject({ iteration: z.number().int().nonnegative() }),
  history: z.array(z.looseObject({ iteration: z.number().int().nonnegative() })),
  runs: z.number().int().nonnegative(),
  loopStartedAt: z.string(),
});

/**
 * The arguments a `trainingLoop` execution started with (decoded from its history's first event), checked: the
 * configuration through the pipeline schema (a run started with `temporal workflow start --input-file` may carry
 * one without its defaults), the state for the fields a continuation uses.
 *
 * @throws ConfigError naming the workflow and what is wrong.
 */
export function parseRunInput(args: readonly unknown[], workflowId: string): { config: PipelineConfig; state: LoopState | undefined } {
  const where = `workflow '${workflowId}' input`;
  const config = parsePipelineConfig(args[0], `${where} [0]`);
  if (args[1] === undefined || args[1] === null) return { config, state: undefined };
  const state = LoopStateShape.safeParse(args[1]);
  if (!state.success) {
    const issue = state.error.issues[0];
    throw new ConfigError(`${where} [1] $.${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'not a loop state'} (not a trainingLoop state)`);
  }
  return { config, state: state.data as unknown as LoopState };
}

/** What the continued run's latest execution was and returned. */
export interface ClosedRun {
  workflowId: string;
  /** The latest execution's workflow type: only `trainingLoop` runs continue. */
  type: string;
  /** Temporal's status of the latest execution (`COMPLETED`, `FAILED`, `CANCELLED`, `TERMINATED`, `TIMED_OUT`, …). */
  status: string;
  startTime: Date;
  /** The latest execution's arguments: the validated configuration and the state it started from (none: the first). */
  config: PipelineConfig;
  state: LoopState | undefined;
  /** A completed execution's result (workflows/training-loop.ts `LoopResult`). */
  result?: { stopReason: StopReason; history: IterationMetrics[]; policy: PolicyState; runs: number } | undefined;
}

/** How to start the continuation, and a line that says what it does. */
export interface Continuation {
  config: PipelineConfig;
  /** Undefined: the run stopped in its first iteration, which is what starting afresh does again. */
  state: LoopState | undefined;
  /** The iteration the continuation runs first. */
  iteration: number;
  summary: string;
}

/** The fields a continuation keeps: they name the experiment and where its artifacts are. */
const KEPT = ['name', 'env', 'store'] as const;

/**
 * The continuation of `run`, with `amended` (read from `amendedFile`) instead of the run's own configuration
 * and `maxIterations` instead of its `max_iterations` when given.
 *
 * @throws ConfigError when the run is still open or not a training loop, when the amended configuration names
 *   another experiment, env or store, or when the loop would have no iteration left to run.
 */
export function continuation(run: ClosedRun, options: { amended?: PipelineConfig; amendedFile?: string; maxIterations?: number } = {}): Continuation {
  const id = `workflow '${run.workflowId}'`;
  if (run.type !== 'trainingLoop') throw new ConfigError(`${id} is a ${run.type} run: only a trainingLoop continues (start the pass again)`);
  if (run.status === 'RUNNING' || run.status === 'CONTINUED_AS_NEW') {
    throw new ConfigError(`${id} is still running: cancel it first (gymflow pipeline cancel ${run.workflowId} --wait), or let it finish`);
  }
  let config = run.config;
  if (options.amended !== undefined) {
    for (const key of KEPT) {
      if (options.amended[key] !== run.config[key]) {
        throw new ConfigError(
          `${options.amendedFile ?? 'configuration'} $.${key}: ${JSON.stringify(options.amended[key] ?? null)} differs from the continued run's ` +
            `${JSON.stringify(run.config[key] ?? null)} (${id}); a continuation keeps the experiment's ${KEPT.join(', ')}`,
        );
      }
    }
    config = options.amended;
  }
  if (options.maxIterations !== undefined) config = { ...config, max_iterations: options.maxIterations };

  const finished = run.status === 'COMPLETED' && run.result !== undefined && run.result.stopReason !== 'cancelled' ? run.result : undefined;
  let state: LoopState | undefined;
  let summary: string;
  if (finished !== undefined) {
    const last = Math.max(...finished.history.map((h) => h.iteration), (run.state?.iteration ?? 1) - 1);
    state = {
      iteration: last + 1,
      policy: finished.policy,
      history: finished.history,
      paused: false,
      runs: finished.runs,
      loopStartedAt: run.state?.loopStartedAt ?? run.startTime.toISOString(),
      setupDone: false,
    };
    summary = `iteration ${last + 1} after the run's last (it stopped: ${finished.stopReason}), from the policy of iteration ${finished.policy.iteration}`;
  } else if (run.state !== undefined) {
    state = { ...run.state, paused: false, setupDone: false };
    summary = `iteration ${state.iteration} again (the run was ${run.status === 'COMPLETED' ? 'cancelled' : run.status.toLowerCase()} in it), from the policy of iteration ${state.policy.iteration}`;
  } else {
    summary = `from the start (the run was ${run.status === 'COMPLETED' ? 'cancelled' : run.status.toLowerCase()} before its first iteration completed)`;
  }
  const iteration = state?.iteration ?? (config.eval.baseline ? 0 : 1);
  if (iteration > config.max_iterations) {
    throw new ConfigError(
      `${id} continues at iteration ${iteration}, past max_iterations ${config.max_iterations}: raise it (--max-iterations ${iteration} or more, or in the configuration)`,
    );
  }
  return { config, state, iteration, summary };
}
