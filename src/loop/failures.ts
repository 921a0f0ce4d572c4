/**
 * The failure types the pipeline's activities set, and whether a retry may fix each: the one table that the
 * workflows' retry policies (`nonRetryableErrorTypes`), the activities' mapping of gymflow errors
 * (`withFailureMapping`) and the train activity's trainer outcomes all read. Workflow-safe (plain data): the
 * workflows import it.
 *
 * A type missing from the table is retryable (Temporal's default). A failure thrown with its own
 * `nonRetryable` flag keeps it whatever the table says: `awaitPolicyServer` fails for good with
 * `SERVER_NOT_READY` once it has waited out the startup timeout, while a rollout shard's `SERVER_NOT_READY`
 * (the server is restarting) is retried.
 */

/** Whether a failure type may be retried, and why. */
export interface FailureTypeInfo {
  /** `false`: no retry can fix it, so no retry policy starts one. */
  readonly retryable: boolean;
  /** Why (for the reader; not shown to the user). */
  readonly why: string;
}

/** Every failure type an activity sets on purpose, with its retryability. */
export const FAILURE_TYPES = {
  // gymflow error codes (src/core/errors.ts) that say the input is wrong: the same input fails the same way.
  CONFIG_ERROR: { retryable: false, why: 'the configuration (or an activity input) is wrong' },
  SCHEMA_ERROR: { retryable: false, why: 'a record does not match its schema' },
  REGISTRY_ERROR: { retryable: false, why: 'an unknown or duplicate environment id' },
  TASK_ERROR: { retryable: false, why: 'a task is malformed' },
  DATA_ERROR: { retryable: false, why: 'the data is unusable (an export with no records, a dataset the trainer rejects)' },
  // The trainer's outcomes (activities/train.ts).
  CHECKPOINT_ERROR: { retryable: false, why: 'resuming from a checkpoint of other data or another plan' },
  TRAINING_DIVERGED: { retryable: false, why: 'gradients stayed NaN or infinite: a retry replays the same batches from the last checkpoint' },
  TRAINER_OUT_OF_MEMORY: {
    retryable: false,
    why: 'even a single sequence did not fit (the trainer already ran the step again in smaller pieces), or several processes train: a retry fails on the same step',
  },
  TRAINER_STALLED: { retryable: true, why: 'the watchdog ended a training that stopped making progress: a retry resumes from the last checkpoint, on a GPU that may answer again' },
  TRAINER_FAILED: { retryable: true, why: 'a crash: a retry resumes from the last checkpoint' },
  // Rollouts and serving (activities/rollouts.ts, activities/serve.ts).
  AGENT_UNREACHABLE: { retryable: true, why: "the agent's model API stayed unreachable: the shard is collected again rather than trained on" },
  AGENT_REFUSED: { retryable: false, why: "the agent's model API refused every request (a bad key, an unknown model)" },
  SERVER_NOT_READY: { retryable: true, why: 'the policy server is (re)starting; awaitPolicyServer fails for good on its own once the startup timeout has passed' },
  // The reward stage's judge (activities/reward.ts).
  JUDGE_REFUSED: { retryable: false, why: 'the judge API refused a request (a bad key, an unknown model, a malformed request): the same request is refused again' },
  JUDGE_UNAVAILABLE: { retryable: true, why: "the judge API stayed unreachable through the request's own retries: the stage runs again, paying only for verdicts not yet cached" },
  // TensorBoard curves (activities/curves.ts).
  CURVES_UNWRITABLE: { retryable: false, why: 'the curves path cannot be a directory or may not be written' },
} as const satisfies Record<string, FailureTypeInfo>;

/** A failure type of {@link FAILURE_TYPES}. */
export type FailureType = keyof typeof FAILURE_TYPES;

/** Whether a failure of `type` may be retried: `false` only for the types the table marks so. */
export function isRetryable(type: string): boolean {
  return !Object.hasOwn(FAILURE_TYPES, type) || FAILURE_TYPES[type as FailureType].retryable;
}

/** The failure types no retry can fix, for the retry policies' `nonRetryableErrorTypes`. */
export const NON_RETRYABLE_TYPES: readonly string[] = (Object.keys(FAILURE_TYPES) as FailureType[]).filter((type) => !FAILURE_TYPES[type].retryable);
