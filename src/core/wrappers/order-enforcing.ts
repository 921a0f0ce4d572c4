import { EnvClosedError, EpisodeEndedError, ResetNeededError } from '../errors.js';
import type { Action, ResetOptions, StepMeta, TimeStep } from '../types.js';
import { isDone } from '../types.js';
import { Wrapper } from './wrapper.js';

/**
 * Enforces the call order of the protocol for any environment: `step` before `reset` throws
 * `ResetNeededError`, `step` after the episode ended throws `EpisodeEndedError`, use after `close`
 * throws `EnvClosedError`, and `close` is idempotent even when the inner environment's is not.
 */
export class OrderEnforcing extends Wrapper {
  private phase: 'new' | 'running' | 'ended' | 'closed' = 'new';

  override async reset(options?: ResetOptions): Promise<TimeStep> {
    if (this.phase === 'closed') throw new EnvClosedError();
    const ts = await this.env.reset(options);
    this.phase = isDone(ts) ? 'ended' : 'running';
    return ts;
  }

  override async step(action: Action, meta?: StepMeta): Promise<TimeStep> {
    if (this.phase === 'closed') throw new EnvClosedError();
    if (this.phase === 'new') throw new ResetNeededError();
    if (this.phase === 'ended') throw new EpisodeEndedError();
    const ts = await this.env.step(action, meta);
    if (isDone(ts)) this.phase = 'ended';
    return ts;
  }

  override async close(): Promise<void> {
    if (this.phase === 'closed') return;
    this.phase = 'closed';
    await this.env.close();
  }

  /** Whether `reset` has been called at least once since construction. */
  get hasReset(): boolean {
    return this.phase !== 'new';
  }
}
