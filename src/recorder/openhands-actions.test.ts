import { describe, expect, it } from 'vitest';
import { actionBookkeeping, actionToCall, openHandsOutcome } from './openhands-actions.js';

describe('OpenHands actions', () => {
  it('maps action types to CodeAct calls', () => {
    expect(actionToCall('run', { command: 'ls', thought: 't', is_confirmed: 'confirmed' })).toEqual({ tool: 'execute_bash', params: { command: 'ls' } });
    expect(actionToCall('run_ipython', { code: 'x=1', kernel_init_code: 'k' })).toEqual({ tool: 'execute_ipython_cell', params: { code: 'x=1' } });
    expect(actionToCall('finish', { outputs: {}, thought: 'bye' })).toEqual({ tool: 'finish', params: {} });
    expect(actionToCall('browse', { url: 'u', thought: '' })).toEqual({ tool: 'browse', params: { url: 'u' } });
    expect(actionBookkeeping({ thought: 't', kernel_init_code: 'k', command: 'c' })).toEqual({ kernel_init_code: 'k' });
  });

  it('derives the outcome from the last step and agent state', () => {
    expect(openHandsOutcome('finish', 'running', 0)).toMatchObject({ terminated: true, reason: 'finished' });
    expect(openHandsOutcome('respond', 'awaiting_user_input', 0)).toMatchObject({ terminated: true, reason: 'awaiting_user_input' });
    expect(openHandsOutcome('execute_bash', 'error', 0)).toMatchObject({ truncated: true, reason: 'error' });
    expect(openHandsOutcome('execute_bash', undefined, 1)).toMatchObject({ terminated: false, truncated: false, reason: 'incomplete' });
    expect(openHandsOutcome('finish', undefined, 0, { success: true })).toMatchObject({ success: true, score: 1 });
  });
});
