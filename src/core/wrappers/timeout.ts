import { EpisodeEndedError, GymflowError } from '../errors.js';
import type { Action, AgentEnv, ResetOptions, StepMeta, TimeStep } from '../types.js';
import { Wrapper } from './wrapper.js';

/** The longest delay `setTimeout` keeps (2^31 − 1 ms, ~24.8 days); a longer one fires after 1 ms. */
const MAX_TIMER_MS = 2_147_483_647;

/**
 * Truncates an episode when its wall-clock time since `reset` exceeds `timeoutMs`, with
 * `info.reason = 'timeout'`. A step still running at the deadline is not awaited: the wrapper returns
 * a truncated time step at once, so an agent loop never hangs on a stuck environment. The abandoned
 * step's result is discarded (environments should also bound their own operations; the sandbox does).
 * Once it has truncated, further steps throw `EpisodeEndedError` until `reset`.
 */
export class Timeout extends Wrapper {
  private deadline = Number.POSITIVE_INFINITY;
  private truncatedHere = false;

  constructor(
    env: AgentEnv,
    readonly timeoutMs: number,
    private readonly now: () => number = Date.now,
  ) {
    super(env);
    if (!(timeoutMs > 0)) throw new GymflowError('CONFIG_ERROR', `Timeout: timeoutMs must be > 0, got ${timeoutMs}`);
  }

  override async reset(options?: ResetOptions): Promise<TimeStep> {
    const ts = await this.env.reset(options);
    this.truncatedHere = false;
    this.deadline = this.now() + this.timeoutMs;
    return ts;
  }

  override async step(action: Action, meta?: StepMeta): Promise<TimeStep> {
    if (this.truncatedHere) throw new EpisodeEndedError();
    const remaining = this.deadline - this.now();
    if (remaining <= 0) return this.expired(undefined);
    let timer: NodeJS.Timeout | undefined;
    const expiry = new Promise<'expired'>((resolve) => {
      // A deadline past the longest timer is waited for in pieces.
      const arm = (): void => {
        const left = this.deadline - this.now();
        timer = left > MAX_TIMER_MS ? setTimeout(arm, MAX_TIMER_MS) : setTimeout(() => resolve('expired'), left);
      };
      arm();
    });
    const pending = this.env.step(action, meta);
    try {
      const result = await Promise.race([pending, expiry]);
      if (result === 'expired') {
        pending.catch(() => undefined); // the abandoned step may still reject; nobody is listening
        return this.expired(undefined);
      }
      if (!result.terminated && !result.truncated && this.now() >= this.deadline) return this.expired(result);
      return result;
    } finally {
      clearTimeout(timer);
    }
  }

  private expired(last: TimeStep | undefined): TimeStep {
    this.truncatedHere = true;
    const note = `[episode time limit of ${this.timeoutMs} ms reached]`;
    return {
      observation: last ? `${last.observation}\n${note}` : note,
      reward: last?.reward ?? 0,
      terminated: false,
      truncated: true,
      info: { ...last?.info, reason: 'timeout' },
    };
  }
}
