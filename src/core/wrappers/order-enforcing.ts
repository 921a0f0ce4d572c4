import { EpisodePhase } from '../episode-phase.js';
import type { Action, ResetOptions, StepMeta, TimeStep } from '../types.js';
import { Wrapper } from './wrapper.js';

/**
 * Enforces the call order of the protocol for any environment ({@link EpisodePhase}): `step` before `reset`
 * throws `ResetNeededError`, `step` after the episode ended throws `EpisodeEndedError`, a `step` while another
 * is running throws `StepInProgressError`, use after `close` throws `EnvClosedError`, and `close` is idempotent
 * even when the inner environment's is not.
 */
export class OrderEnforcing extends Wrapper {
  private readonly order = new EpisodePhase();

  override async reset(options?: ResetOptions): Promise<TimeStep> {
    const episode = this.order.beginReset();
    const ts = await this.env.reset(options);
    this.order.reset(episode, ts);
    return ts;
  }

  override async step(action: Action, meta?: StepMeta): Promise<TimeStep> {
    const episode = this.order.beginStep();
    try {
      const ts = await this.env.step(action, meta);
      this.order.stepped(episode, ts);
      return ts;
    } finally {
      this.order.endStep(episode);
    }
  }

  override async close(): Promise<void> {
    if (this.order.close()) await this.env.close();
  }

  /** Whether `reset` has been called at least once since construction. */
  get hasReset(): boolean {
    return this.order.started;
  }
}
