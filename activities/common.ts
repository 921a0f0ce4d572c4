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
import { isRetryable } from '../src/loop/failures.js';
import type { StageName } from '../src/loop/status.js';
import { stageProgressSignal, type StageProgress } from '../workflows/messages.js';
import { defined } from '../src/core/defined.js';

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
 * Runs an activity body, turning gymflow errors into `ApplicationFailure`s of type = the code, non-retryable
 * where `src/loop/failures.ts` says no retry can fix the code, retryable otherwise.
 */
export async function withFailureMapping<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof ApplicationFailure || err instanceof CancelledFailure) throw err;
    if (err instanceof GymflowError) {
      throw ApplicationFailure.create({ message: err.message, type: err.code, nonRetryable: !isRetryable(err.code), cause: err });
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

/**
 * The shortest time between two `stage_progress` signals of one activity. The interval then grows with the
 * activity's run time (a fiftieth of it, up to 10 minutes): every signal adds a signal event and a workflow
 * task to the run's history, which Temporal ends at 51,200 events, and an iteration's history only starts
 * afresh at `continueAsNew`. So a training of 7 days sends ~1,300 signals (0.12 per minute from the tenth
 * hour on), not 300,000.
 */
export const PROGRESS_SIGNAL_MIN_INTERVAL_MS = 2_000;
/** The longest time between two `stage_progress` signals of one activity ({@link PROGRESS_SIGNAL_MIN_INTERVAL_MS}). */
export const PROGRESS_SIGNAL_MAX_INTERVAL_MS = 600_000;

/** The time before an activity's next `stage_progress` signal, `elapsedMs` after its reporter was created. */
export function progressSignalInterval(elapsedMs: number): number {
  return Math.min(PROGRESS_SIGNAL_MAX_INTERVAL_MS, Math.max(PROGRESS_SIGNAL_MIN_INTERVAL_MS, elapsedMs / 50));
}

/**
 * Events in a workflow run's history past which activities send no more `stage_progress` signals (heartbeats
 * go on, and the Web UI shows them on the pending activity). Many shards that each run for minutes would
 * otherwise fill the history between two `continueAsNew`s however slowly each one signals. Below Temporal's
 * warning at 10,240 events, which leaves room for the rest of the iteration's events.
 */
export const PROGRESS_HISTORY_BUDGET = 8_000;
/** How often one activity reads its run's history length ({@link PROGRESS_HISTORY_BUDGET}): one `describe` call. */
const HISTORY_CHECK_INTERVAL_MS = 60_000;
/**
 * Events past the budget within which an activity that finds it passed still sends its last signal: the first
 * ones to find it say so, and the shards that start later stay silent.
 */
const LAST_SIGNAL_WINDOW = 400;

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
 * Heartbeats `details()` every quarter of the activity's heartbeat timeout (at least a second apart) until the
 * returned function is called: progress heartbeats come only when an episode finishes, and a live worker whose
 * episodes take longer than the timeout (a slow model, a long test run) must not be taken for a lost one. No-op
 * in a local activity, or without a heartbeat timeout.
 */
export function keepAlive(details: () => unknown): () => void {
  const ctx = Context.current();
  const timeoutMs = ctx.info.heartbeatTimeoutMs;
  if (ctx.info.isLocal || timeoutMs === undefined || timeoutMs <= 0) return () => undefined;
  const timer = setInterval(() => ctx.heartbeat(details()), Math.max(1_000, timeoutMs / 4));
  return () => clearInterval(timer);
}

/**
 * Reports progress: a heartbeat with `details` every call (or at most every `heartbeatIntervalMs`, and on the
 * last unit) and a `stage_progress` signal to the workflow that started the activity at most every
 * {@link progressSignalInterval} (2 s at first, growing with the activity's run time; the first after
 * `firstSignalAfterMs`), plus one on the last unit once any was sent. Before a signal, at most once a
 * minute, it reads the run's history length: past {@link PROGRESS_HISTORY_BUDGET} events it sends one last
 * signal, whose note says that progress stops here (unless the history is already well past it, when other
 * activities have said so), and none after. Signals are best-effort: the activity
 * never fails because of them.
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
  const created = Date.now();
  /** When the next signal may go (the last unit's may go earlier once one was sent). */
  let nextSignal = created + (options.firstSignalAfterMs ?? 0);
  let signalled = false;
  /** Set once the run's history passed the budget: no more signals. */
  let muted = false;
  let nextHistoryCheck = 0;
  let pending: Promise<void> | undefined;
  let queuedLast: StageProgress | undefined;
  const signal = async (progress: StageProgress): Promise<void> => {
    const execution = ctx.info.workflowExecution;
    if (execution === undefined || muted) return;
    const handle = ctx.client.workflow.getHandle(execution.workflowId, execution.runId);
    if (Date.now() >= nextHistoryCheck) {
      nextHistoryCheck = Date.now() + HISTORY_CHECK_INTERVAL_MS;
      // A length that cannot be read (a failed call) does not hold the signal back.
      const historyLength = await handle.describe().then((d) => d.historyLength, () => 0);
      if (historyLength >= PROGRESS_HISTORY_BUDGET) {
        muted = true;
        if (historyLength >= PROGRESS_HISTORY_BUDGET + LAST_SIGNAL_WINDOW) return;
        const stop = `progress signals stopped: the run's history has ${historyLength} events (heartbeats go on; the Web UI shows them)`;
        await handle.signal(stageProgressSignal, { ...progress, note: progress.note === undefined ? stop : `${progress.note}; ${stop}` });
        return;
      }
    }
    await handle.signal(stageProgressSignal, progress);
  };
  const send = (progress: StageProgress): void => {
    // Best-effort: when it fails (or there is no client, in a test environment) heartbeats still carry the progress.
    pending = signal(progress)
      .catch(() => undefined)
      .finally(() => {
        pending = undefined;
        const next = queuedLast;
        queuedLast = undefined;
        if (next !== undefined) send(next);
      });
  };
  return (done, total, details, note) => {
    const now = Date.now();
    const last = done >= total;
    if (last || now - lastBeat >= heartbeatInterval) {
      ctx.heartbeat(details ?? { done, total });
      lastBeat = now;
    }
    if (muted || (now < nextSignal && !(last && signalled))) return;
    const progress: StageProgress = { stage, done, total, unit, key: ctx.info.activityId, ...defined({ note }) };
    if (pending !== undefined) {
      // The last unit's signal waits for the one in flight rather than being lost (the status would stay short of the total).
      if (last && signalled) queuedLast = progress;
      return;
    }
    nextSignal = now + progressSignalInterval(now - created);
    signalled = true;
    send(progress);
  };
}
