/**
 * Every timeout and retry policy of the pipeline's activities, in one place, each with the reason for it.
 * Workflows create one `proxyActivities` binding per policy from these.
 */
import { ActivityCancellationType, type ActivityOptions, type LocalActivityOptions } from '@temporalio/workflow';
import { NON_RETRYABLE_TYPES as NON_RETRYABLE } from '../src/loop/failures.js';

/**
 * Error types no retry can fix, for every policy below: those `src/loop/failures.ts` marks so (the table the
 * activities set their failures from). A copy, since a retry policy takes a mutable list.
 */
const NON_RETRYABLE_TYPES: string[] = [...NON_RETRYABLE];

/**
 * Configuration checks: fast and pure reads. A short timeout and few retries — a check that fails for a
 * transient reason (a worker restarting) is worth one more try, a bad configuration is non-retryable anyway.
 */
export const CHECK_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '1 second', maximumAttempts: 3, nonRetryableErrorTypes: NON_RETRYABLE_TYPES },
};

/**
 * Store reads and writes (task plans, reward scoring, dataset export): idempotent (content-addressed
 * outputs), minutes at most. Retried with backoff; heartbeats let a lost worker be noticed in a minute.
 */
export const STORE_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '30 minutes',
  heartbeatTimeout: '1 minute',
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 5, nonRetryableErrorTypes: NON_RETRYABLE_TYPES },
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
};

/**
 * The reward stage's judge (`judgeRollouts`): model API calls for every step, minutes to hours. Each request is
 * retried inside the activity (429, 5xx, timeouts, with backoff that honours `retry-after`); the activity itself is
 * retried when the API stayed unreachable through those (`JUDGE_UNAVAILABLE`), and every verdict already paid for
 * is read back from the store's cache, so a retry pays only for the rest. A refused request (`JUDGE_REFUSED`: bad
 * key, unknown model) fails the stage at once. Heartbeats carry what was spent, so the budget covers every attempt.
 */
export const JUDGE_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '6 hours',
  heartbeatTimeout: '2 minutes',
  retry: { initialInterval: '5 seconds', backoffCoefficient: 2, maximumInterval: '2 minutes', maximumAttempts: 5, nonRetryableErrorTypes: NON_RETRYABLE_TYPES },
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
};

/**
 * One rollout shard: episodes in an environment (a sandbox container, a local policy). Idempotent — a
 * retried shard recollects with the same seeds. Heartbeats its progress (at most every 100 ms); an episode
 * can take a while (a sandbox test run), so 5 minutes without one means the worker is gone. Cancellation
 * waits for the episodes in flight to finish, so no sandbox is left half-used.
 */
export const SHARD_OPTIONS = {
  startToCloseTimeout: '2 hours',
  heartbeatTimeout: '5 minutes',
  retry: { initialInterval: '5 seconds', backoffCoefficient: 2, maximumInterval: '2 minutes', maximumAttempts: 5, nonRetryableErrorTypes: NON_RETRYABLE_TYPES },
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
} satisfies ActivityOptions;

/**
 * One rollout shard as a local activity (`collect.shard_execution: local`): run by the worker that runs the
 * workflow, recorded in the history when the workflow task completes. The same limits and retries as
 * {@link SHARD_OPTIONS}, less the heartbeat timeout: a local activity cannot heartbeat (the SDK keeps the
 * workflow task alive instead, and a lost worker shows as a workflow task timeout, after which another worker
 * runs the shard again). Retries that back off longer than a minute wait on a workflow timer.
 */
export const LOCAL_SHARD_OPTIONS: LocalActivityOptions = {
  startToCloseTimeout: SHARD_OPTIONS.startToCloseTimeout,
  retry: SHARD_OPTIONS.retry,
  localRetryThreshold: '1 minute',
  cancellationType: SHARD_OPTIONS.cancellationType,
};

/** Evaluation: like a shard (episodes, heartbeats per episode), all of the eval split in one activity. */
export const EVAL_OPTIONS: ActivityOptions = { ...SHARD_OPTIONS, startToCloseTimeout: '4 hours' };

/** Default of `train.heartbeat_timeout`: how long a training may go without a heartbeat. */
export const TRAIN_HEARTBEAT_TIMEOUT = '2 minutes';

/**
 * Training on the GPU queue. The start-to-close limit comes from `train.timeout` (default 24 h). The
 * activity heartbeats on every trainer event and at least every quarter of the heartbeat timeout besides
 * (the workers send one at most every 5 s), so `train.heartbeat_timeout` (default 2 minutes) without one
 * means the worker died: the retry resumes from the newest checkpoint (the heartbeat's or a newer one on
 * disk). Retried while attempts get further: `train` itself stops after three attempts in a row that ended
 * without a newer checkpoint than they started from (`TRAIN_ATTEMPTS_WITHOUT_PROGRESS`), so a crash mid-run is
 * resumed however often it happens and a trainer that keeps failing is not; 20 attempts are the server's ceiling.
 * Cancellation waits until the trainer's process group is gone, so the GPU is free when the workflow moves on.
 */
export function trainOptions(startToCloseTimeout: string, heartbeatTimeout: string = TRAIN_HEARTBEAT_TIMEOUT): ActivityOptions {
  return {
    startToCloseTimeout,
    heartbeatTimeout,
    retry: { initialInterval: '10 seconds', backoffCoefficient: 2, maximumInterval: '5 minutes', maximumAttempts: 20, nonRetryableErrorTypes: NON_RETRYABLE_TYPES },
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  };
}

/**
 * GPU setup work (the initial model, ONNX export): a few minutes of Python, idempotent. Heartbeats every
 * 10 s from the activity's timer.
 */
export const GPU_SETUP_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '1 hour',
  heartbeatTimeout: '1 minute',
  retry: { initialInterval: '5 seconds', backoffCoefficient: 2, maximumAttempts: 3, nonRetryableErrorTypes: NON_RETRYABLE_TYPES },
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
};

/**
 * The loop's TensorBoard curves (`writeLoopCurves`, GPU queue): an append of a few hundred bytes. Three attempts
 * within a minute (one when the path cannot be written: `CURVES_UNWRITABLE`); after that the workflow logs the
 * failure and goes on, since a missing point costs a curve, not the loop.
 */
export const CURVES_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumAttempts: 3, nonRetryableErrorTypes: NON_RETRYABLE_TYPES },
};

/**
 * The policy server (`servePolicy`, GPU queue): runs as long as the stage that acts through it, until the
 * workflow cancels it. Heartbeats every 5 s, so 30 s without one means the GPU worker is gone (the stage's
 * shards wait for the server meanwhile, so the sooner a new worker takes over the better). A server
 * that dies is started again twice (the stage's requests retry meanwhile); a checkpoint it cannot load is
 * non-retryable. Cancellation waits until the server's process group is gone, so the GPU and the port are
 * free when the workflow moves on (training, the next stage's server).
 */
export const SERVE_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '1 day',
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '5 seconds', backoffCoefficient: 2, maximumAttempts: 3, nonRetryableErrorTypes: NON_RETRYABLE_TYPES },
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
};

/**
 * Waiting for the policy server (`awaitPolicyServer`, CPU queue): the activity itself gives up after
 * `policy.serve.startup_timeout` (at most 1 h). Heartbeats on every poll (each second); a lost worker is
 * retried.
 */
export const AWAIT_SERVER_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '70 minutes',
  heartbeatTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumAttempts: 3, nonRetryableErrorTypes: NON_RETRYABLE_TYPES },
  cancellationType: ActivityCancellationType.TRY_CANCEL,
};
