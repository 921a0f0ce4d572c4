import { EnvClosedError, EpisodeEndedError, ResetNeededError, StepInProgressError } from './errors.js';
import type { TimeStep } from './types.js';
import { isDone } from './types.js';

/**
 * The call-order state machine of the protocol, shared by `BaseEnv` and the `OrderEnforcing` wrapper:
 * `step` before `reset` throws `ResetNeededError`, after the end `EpisodeEndedError`, while another step of the
 * episode is running `StepInProgressError`, and anything after `close` `EnvClosedError`.
 *
 * Episodes are numbered by their `reset`, so a step that finishes after a later reset (one that a `Timeout`
 * gave up on) neither ends the new episode nor blocks its steps.
 *
 * @example
 * ```ts
 * const episode = this.order.beginStep(); // throws when the call is out of order
 * try {
 *   const ts = await inner.step(action);
 *   this.order.stepped(episode, ts);
 *   return ts;
 * } finally {
 *   this.order.endStep(episode);
 * }
 * ```
 */
export class EpisodePhase {
  private phase: 'new' | 'running' | 'ended' | 'closed' = 'new';
  private episode = 0;
  /** The episode whose step is running, or -1. */
  private stepping = -1;

  /** Whether `reset` has been called at least once. */
  get started(): boolean {
    return this.phase !== 'new';
  }

  /** Starts a reset: the new episode's number. */
  beginReset(): number {
    if (this.phase === 'closed') throw new EnvClosedError();
    return ++this.episode;
  }

  /** What the reset of `episode` returned; ignored once another reset or `close` came after it. */
  reset(episode: number, ts: TimeStep): void {
    if (this.phase !== 'closed' && episode === this.episode) this.phase = isDone(ts) ? 'ended' : 'running';
  }

  /** Starts a step: the episode it belongs to. */
  beginStep(): number {
    if (this.phase === 'closed') throw new EnvClosedError();
    if (this.phase === 'new') throw new ResetNeededError();
    if (this.phase === 'ended') throw new EpisodeEndedError();
    if (this.stepping === this.episode) throw new StepInProgressError();
    this.stepping = this.episode;
    return this.episode;
  }

  /** What the step of `episode` returned: a terminal one ends the episode, unless a reset came after it. */
  stepped(episode: number, ts: TimeStep): void {
    if (isDone(ts) && this.phase === 'running' && episode === this.episode) this.phase = 'ended';
  }

  /** The step of `episode` is over (returned or threw). */
  endStep(episode: number): void {
    if (this.stepping === episode) this.stepping = -1;
  }

  /** Marks it closed; false when it already was (`close` is idempotent). */
  close(): boolean {
    if (this.phase === 'closed') return false;
    this.phase = 'closed';
    return true;
  }
}
