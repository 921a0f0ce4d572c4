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

/**
 * Reports progress: a heartbeat with `details` every call (the SDK throttles them) and, at most every
 * 2 s and on the last unit, a `stage_progress` signal to the workflow that started the activity. The
 * signal is best-effort: the activity never fails because of it.
 */
export function progressReporter(stage: StageName, unit: string): (done: number, total: number, details?: unknown, note?: string) => void {
  const ctx = Context.current();
  let last = 0;
  let pending: Promise<void> | undefined;
  return (done, total, details, note) => {
    ctx.heartbeat(details ?? { done, total });
    const now = Date.now();
    if (pending !== undefined || (now - last < PROGRESS_SIGNAL_INTERVAL_MS && done < total)) return;
    last = now;
    const progress: StageProgress = { stage, done, total, unit, key: ctx.info.activityId, ...(note === undefined ? {} : { note }) };
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
        });
    } catch {
      // No client (a test environment without one): heartbeats still carry the progress.
    }
  };
}
