import { describe, expect, it } from 'vitest';
import { parsePipelineConfig } from '../src/loop/config.js';
import { TRAIN_HEARTBEAT_TIMEOUT, trainOptions } from './activity-options.js';

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
