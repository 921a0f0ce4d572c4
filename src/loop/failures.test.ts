import { describe, expect, it } from 'vitest';
import { FAILURE_TYPES, isRetryable, NON_RETRYABLE_TYPES } from './failures.js';

describe('failure types', () => {
  it('lists the types no retry can fix', () => {
    // Pinned: a type that changes side changes what every retry policy and activity does with it.
    expect([...NON_RETRYABLE_TYPES].sort()).toEqual(
      [
        'AGENT_REFUSED',
        'CHECKPOINT_ERROR',
        'CONFIG_ERROR',
        'CURVES_UNWRITABLE',
        'DATA_ERROR',
        'JUDGE_REFUSED',
        'REGISTRY_ERROR',
        'SCHEMA_ERROR',
        'TASK_ERROR',
        'TRAINER_OUT_OF_MEMORY',
        'TRAINING_DIVERGED',
      ].sort(),
    );
  });

  it('retries the types the table marks retryable and any type it does not know', () => {
    for (const type of ['TRAINER_STALLED', 'TRAINER_FAILED', 'AGENT_UNREACHABLE', 'SERVER_NOT_READY']) expect(isRetryable(type)).toBe(true);
    expect(isRetryable('CONFIG_ERROR')).toBe(false);
    expect(isRetryable('STORE_ERROR')).toBe(true);
    // Inherited properties of a plain object are not failure types.
    expect(isRetryable('toString')).toBe(true);
    for (const [type, info] of Object.entries(FAILURE_TYPES)) expect(isRetryable(type)).toBe(info.retryable);
  });
});
