import { describe, expect, it } from 'vitest';
import type { ActivityOptions } from '@temporalio/workflow';
import { parsePipelineConfig } from '../src/loop/config.js';
import { NON_RETRYABLE_TYPES } from '../src/loop/failures.js';
import {
  AWAIT_SERVER_OPTIONS,
  CHECK_OPTIONS,
  CURVES_OPTIONS,
  EVAL_OPTIONS,
  GPU_SETUP_OPTIONS,
  LOCAL_SHARD_OPTIONS,
  SERVE_OPTIONS,
  SHARD_OPTIONS,
  STORE_OPTIONS,
  TRAIN_HEARTBEAT_TIMEOUT,
  trainOptions,
} from './activity-options.js';

describe('train activity options', () => {
  it('take the heartbeat timeout from train.heartbeat_timeout, 2 minutes when absent', () => {
    const c = parsePipelineConfig({ name: 'x', env: 'e', policy: { init: { tiny: {} } }, train: { command: 'sft', timeout: '6h', heartbeat_timeout: '10s' }, max_iterations: 1 }, 't');
    const train = c.phases[0]?.train;
    expect(trainOptions(train?.timeout ?? '', train?.heartbeat_timeout)).toMatchObject({ startToCloseTimeout: '6h', heartbeatTimeout: '10s' });
    // A configuration parsed before the field existed (a replayed history) keeps the old 2 minutes.
    expect(trainOptions('24h').heartbeatTimeout).toBe(TRAIN_HEARTBEAT_TIMEOUT);
    expect(TRAIN_HEARTBEAT_TIMEOUT).toBe('2 minutes');
  });
});

describe('retry policies', () => {
  it('never retry a failure type that src/loop/failures.ts marks non-retryable', () => {
    const policies: ActivityOptions[] = [
      CHECK_OPTIONS,
      STORE_OPTIONS,
      SHARD_OPTIONS,
      EVAL_OPTIONS,
      trainOptions('1h'),
      GPU_SETUP_OPTIONS,
      CURVES_OPTIONS,
      SERVE_OPTIONS,
      AWAIT_SERVER_OPTIONS,
    ];
    for (const options of [...policies, LOCAL_SHARD_OPTIONS]) expect(options.retry?.nonRetryableErrorTypes).toEqual([...NON_RETRYABLE_TYPES]);
    expect(NON_RETRYABLE_TYPES).toContain('CONFIG_ERROR');
  });
});
