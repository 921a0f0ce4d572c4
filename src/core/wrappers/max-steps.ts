import { EpisodeEndedError, GymflowError } from '../errors.js';
import type { Action, AgentEnv, ResetOptions, StepMeta, TimeStep } from '../types.js';
import { Wrapper } from './wrapper.js';

/**
 * Truncates an episode after `maxSteps` steps (Gymnasium's `TimeLimit`), with `info.reason =
 * 'max_steps'`. A step that terminates the episode on the limit stays terminated and not truncated:
 * the task did end, and the two flags are never both set. Once it has truncated, further steps
 * throw `EpisodeEndedError` until `reset`, wherever the wrapper sits in a stack.
 */
export class MaxSteps extends Wrapper {
  private elapsed = 0;
  private truncatedHere = false;

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
    this.truncatedHere = false;
    return this.env.reset(options);
  }

  override async step(action: Action, meta?: StepMeta): Promise<TimeStep> {
    if (this.truncatedHere) throw new EpisodeEndedError();
    const ts = await this.env.step(action, meta);
    this.elapsed += 1;
    if (this.elapsed >= this.maxSteps && !ts.terminated && !ts.truncated) {
      this.truncatedHere = true;
      return { ...ts, truncated: true, info: { ...ts.info, reason: 'max_steps' } };
    }
    return ts;
  }
}
