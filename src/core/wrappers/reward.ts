import type { Action, AgentEnv, ResetOptions, StepMeta, TimeStep } from '../types.js';
import { Wrapper } from './wrapper.js';

/** What a step-level reward function sees. */
export interface RewardContext {
  action: Action;
  timeStep: TimeStep;
  /** 0-based index of this step in the episode. */
  stepIndex: number;
}

/** Computes the reward of one step. */
export type StepRewardFn = (ctx: RewardContext) => number;

/**
 * Replaces each step's reward with `fn(ctx)` (Gymnasium's `TransformReward`, but the function sees the
 * action and the whole time step). The environment's own reward is kept as `info.envReward`.
 *
 * @example
 * ```ts
 * // Penalise every invalid action by 0.1 on top of the env's reward.
 * const env = new RewardWrapper(make('gymflow/tool-use-v0'), ({ timeStep }) => timeStep.reward - (timeStep.info.error ? 0.1 : 0));
 * ```
 */
export class RewardWrapper extends Wrapper {
  private index = 0;

  constructor(
    env: AgentEnv,
    private readonly fn: StepRewardFn,
  ) {
    super(env);
  }

  override reset(options?: ResetOptions): Promise<TimeStep> {
    this.index = 0;
    return this.env.reset(options);
  }

  override async step(action: Action, meta?: StepMeta): Promise<TimeStep> {
    const ts = await this.env.step(action, meta);
    const reward = this.fn({ action, timeStep: ts, stepIndex: this.index });
    this.index += 1;
    if (!Number.isFinite(reward)) {
      throw new TypeError(`RewardWrapper: reward function returned ${reward} at step ${this.index - 1}`);
    }
    return { ...ts, reward, info: { ...ts.info, envReward: ts.reward } };
  }
}
