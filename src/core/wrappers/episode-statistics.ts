import type { Action, AgentEnv, ResetOptions, StepMeta, TimeStep } from '../types.js';
import { isDone } from '../types.js';
import { Wrapper } from './wrapper.js';

/** Statistics of one finished episode, as attached to the final step's `info.episode`. */
export interface EpisodeStats {
  /** Return: the sum of rewards. */
  r: number;
  /** Length in steps. */
  l: number;
  /** Wall time in seconds. */
  t: number;
}

/**
 * Tracks each episode's return, length and wall time (Gymnasium's `RecordEpisodeStatistics`). On the
 * final step it adds `info.episode = { r, l, t }` and appends to bounded queues of recent episodes.
 */
export class EpisodeStatistics extends Wrapper {
  /** The most recent episodes' statistics, oldest first, at most `bufferLength`. */
  readonly history: EpisodeStats[] = [];
  private ret = 0;
  private len = 0;
  private start = 0;

  constructor(
    env: AgentEnv,
    readonly bufferLength = 100,
    private readonly now: () => number = Date.now,
  ) {
    super(env);
  }

  override reset(options?: ResetOptions): Promise<TimeStep> {
    this.ret = 0;
    this.len = 0;
    this.start = this.now();
    return this.env.reset(options);
  }

  override async step(action: Action, meta?: StepMeta): Promise<TimeStep> {
    const ts = await this.env.step(action, meta);
    this.ret += ts.reward;
    this.len += 1;
    if (!isDone(ts)) return ts;
    const episode: EpisodeStats = { r: this.ret, l: this.len, t: (this.now() - this.start) / 1000 };
    this.history.push(episode);
    if (this.history.length > this.bufferLength) this.history.shift();
    return { ...ts, info: { ...ts.info, episode } };
  }

  /** Mean return and length over the buffered episodes (NaN when none finished yet). */
  summary(): { episodes: number; meanReturn: number; meanLength: number } {
    const n = this.history.length;
    const sum = (f: (e: EpisodeStats) => number): number => this.history.reduce((a, e) => a + f(e), 0);
    return { episodes: n, meanReturn: n ? sum((e) => e.r) / n : NaN, meanLength: n ? sum((e) => e.l) / n : NaN };
  }
}
