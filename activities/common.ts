/**
 * What every pipeline activity shares: input validation with zod (a bad input is a non-retryable failure
 * naming the field), mapping gymflow's typed errors to Temporal failures, and progress reporting (heartbeat
 * + a throttled `stage_progress` signal to the workflow, so `pipeline_status` shows a running stage's
 * progress).
 */
import { Context } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import type { z } from 'zod';
import { GymflowError } from '../src/core/errors.js';
import { formatZodIssues } from '../src/core/trajectory.js';
import type { StageName } from '../src/pipeline/status.js';
import { stageProgressSignal, type StageProgress } from '../workflows/messages.js';

/** Error codes no retry can fix: the configuration or the data is wrong. */
export const NON_RETRYABLE_CODES = new Set(['CONFIG_ERROR', 'SCHEMA_ERROR', 'REGISTRY_ERROR', 'TASK_ERROR', 'INVALID_ARGUMENT', 'DATA_ERROR']);

/** Parses an activity's input; a bad one fails for good with every problem named (`activity $.field: …`). */
export function parseInput<S extends z.ZodType>(schema: S, value: unknown, activity: string): z.infer<S> {
  const r = schema.safeParse(value);
  if (r.success) return r.data as z.infer<S>;
  throw ApplicationFailure.nonRetryable(`invalid input of activity ${activity}:\n  ${formatZodIssues(r.error, activity).join('\n  ')}`, 'CONFIG_ERROR');
}

/** A non-retryable configuration failure naming the field. */
export function configFailure(message: string): ApplicationFailure {
  return ApplicationFailure.nonRetryable(message, 'CONFIG_ERROR');
}

/**
 * Runs an activity body, turning gymflow errors whose code no retry can fix into non-retryable
 * `ApplicationFailure`s (type = the code) and leaving the rest retryable.
 */
export async function withFailureMapping<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof ApplicationFailure || err instanceof CancelledFailure) throw err;
    if (err instanceof GymflowError) {
      if (NON_RETRYABLE_CODES.has(err.code)) throw ApplicationFailure.create({ message: err.message, type: err.code, nonRetryable: true, cause: err });
      throw ApplicationFailure.create({ message: err.message, type: err.code, cause: err });
    }
    throw err;
  }
}

/** Throws the cancellation when the activity was cancelled (after its work stopped cleanly). */
export function throwIfCancelled(): void {
  const ctx = Context.current();
  if (ctx.cancellationSignal.aborted) {
    const reason = ctx.cancellationSignal.reason;
    throw reason instanceof CancelledFailure ? reason : new CancelledFailure(`activity ${ctx.info.activityType} cancelled`);
  }
}

/** Minimum time between two `stage_progress` signals of one activity. */
const PROGRESS_SIGNAL_INTERVAL_MS = 2_000;

/** Options of {@link progressReporter}. */
export interface ProgressReporterOptions {
  /**
   * Minimum time between two heartbeats, 0 (the default) for one per call. A heartbeat costs the activity
   * tens of microseconds of its own thread (the details are serialised and handed to the SDK's core, which
   * throttles what reaches the server to one per several seconds anyway), so a stage that reports after
   * every sub-millisecond episode skips the calls in between; the last unit always beats. Only for stages
   * whose heartbeat details are progress, never resume state (train's details are its checkpoint).
   */
  heartbeatIntervalMs?: number;
  /**
   * How long after the reporter is created the first `stage_progress` signal may go, 0 (the default) for the
   * first unit. Each signal costs the workflow a workflow task, so a shard that finishes sooner than this
   * sends none (its completion updates the status).
   */
  firstSignalAfterMs?: number;
}

/**
 * Reports progress: a heartbeat with `details` every call (or at most every `heartbeatIntervalMs`, and on the
 * last unit) and a `stage_progress` signal to the workflow that started the activity at most every 2 s (the
 * first after `firstSignalAfterMs`), plus one on the last unit once any was sent. The signal is
 * best-effort: the activity never fails because of it.
 *
 * A local activity reports nothing. It cannot heartbeat, and its results reach the history only when the
 * workflow task that waits for it completes: a signal from it lands during that task, the server can reject
 * the completion (an unhandled command), and the SDK runs the local activities again. Shards of 40 s that
 * signalled did so every time and never finished.
 */
export function progressReporter(stage: StageName, unit: string, options: ProgressReporterOptions = {}): (done: number, total: number, details?: unknown, note?: string) => void {
  const ctx = Context.current();
  if (ctx.info.isLocal) return () => undefined;
  const heartbeatInterval = options.heartbeatIntervalMs ?? 0;
  let lastBeat = -Infinity;
  /** When the next signal may go (the last unit's may go earlier once one was sent). */
  let nextSignal = Date.now() + (options.firstSignalAfterMs ?? 0);
  let signalled = false;
  let pending: Promise<void> | undefined;
  let queuedLast: StageProgress | undefined;
  const send = (progress: StageProgress): void => {
    const execution = ctx.info.workflowExecution;
    if (execution === undefined) return;
    try {
      const { workflowId, runId } = execution;
      pending = ctx.client.workflow
        .getHandle(workflowId, runId)
        .signal(stageProgressSignal, progress)
        .catch(() => undefined)
        .finally(() => {
          pending = undefined;
          const next = queuedLast;
          queuedLast = undefined;
          if (next !== undefined) send(next);
        });
    } catch {
      // No client (a test environment without one): heartbeats still carry the progress.
    }
  };
  return (done, total, details, note) => {
    const now = Date.now();
    const last = done >= total;
    if (last || now - lastBeat >= heartbeatInterval) {
      ctx.heartbeat(details ?? { done, total });
      lastBeat = now;
    }
    if (now < nextSignal && !(last && signalled)) return;
    const progress: StageProgress = { stage, done, total, unit, key: ctx.info.activityId, ...(note === undefined ? {} : { note }) };
    if (pending !== undefined) {
      // The last unit's signal waits for the one in flight rather than being lost (the status would stay short of the total).
      if (last && signalled) queuedLast = progress;
      return;
    }
    nextSignal = now + PROGRESS_SIGNAL_INTERVAL_MS;
    signalled = true;
    send(progress);
  };
}
