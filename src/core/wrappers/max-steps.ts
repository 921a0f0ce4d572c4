import { GymflowError } from '../errors.js';
import type { Action, AgentEnv, ResetOptions, StepMeta, TimeStep } from '../types.js';
import { Wrapper } from './wrapper.js';

/**
 * Truncates an episode after `maxSteps` steps (Gymnasium's `TimeLimit`), with `info.reason =
 * 'max_steps'`. A step that terminates the episode on the limit stays terminated and not truncated:
 * the task did end, and the two flags are never both set.
 */
export class MaxSteps extends Wrapper {
  private elapsed = 0;

  constructor(
    env: AgentEnv,
    readonly maxSteps: number,
  ) {
    super(env);
    if (!Number.isInteger(maxSteps) || maxSteps <= 0) {
      throw new GymflowError('CONFIG_ERROR', `MaxSteps: maxSteps must be a positive integer, got ${maxSteps}`);
    }
  }

  override reset(options?: ResetOptions): Promise<TimeStep> {
    this.elapsed = 0;
    return this.env.reset(options);
  }

  override async step(action: Action, meta?: StepMeta): Promise<TimeStep> {
    const ts = await this.env.step(action, meta);
    this.elapsed += 1;
    if (this.elapsed >= this.maxSteps && !ts.terminated && !ts.truncated) {
      return { ...ts, truncated: true, info: { ...ts.info, reason: 'max_steps' } };
    }
    return ts;
  }
}
