import { EpisodePhase } from './episode-phase.js';
import { entropySeed, Rng } from './rng.js';
import { ToolValidator } from './tool-validator.js';
import type { Action, ActionErrorInfo, AgentEnv, ResetOptions, Split, TaskInfo, TimeStep, ToolSpec } from './types.js';
import { defined } from './defined.js';

/**
 * A base class that implements the protocol's bookkeeping so a concrete environment only writes its
 * dynamics: the reset/step/end state machine, seeding (once per `seed`, Gymnasium's rule), schema
 * validation of actions (invalid actions become observations), and an idempotent `close`.
 *
 * @example
 * ```ts
 * class CoinEnv extends BaseEnv {
 *   readonly domain = 'generic';
 *   readonly tools = [submitTool];
 *   protected async onReset() { return this.first('Guess heads or tails.', { id: 'coin', domain: 'generic', instruction: '…' }); }
 *   protected async onStep(action: Action) { return this.end(this.rng.next() < 0.5 ? 1 : 0, 'submitted', '…'); }
 * }
 * ```
 */
export abstract class BaseEnv implements AgentEnv {
  abstract readonly domain: string;
  abstract readonly tools: readonly ToolSpec[];

  /** The episode RNG; valid from the first `reset`. */
  protected rng: Rng = new Rng(0);
  private seeded = false;
  private readonly order = new EpisodePhase();
  private validator: ToolValidator | undefined;
  /** Steps taken in the current episode, invalid actions included. */
  protected stepCount = 0;

  async reset(options: ResetOptions = {}): Promise<TimeStep> {
    const episode = this.order.beginReset();
    if (options.seed !== undefined) {
      this.rng = new Rng(options.seed);
      this.seeded = true;
    } else if (!this.seeded) {
      this.rng = new Rng(entropySeed());
      this.seeded = true;
    }
    this.stepCount = 0;
    const ts = await this.onReset(defined({ task: options.task }));
    this.order.reset(episode, ts);
    return ts;
  }

  async step(action: Action): Promise<TimeStep> {
    const episode = this.order.beginStep();
    try {
      this.validator ??= new ToolValidator(this.tools);
      this.stepCount += 1;
      const problem = this.validator.check(action);
      const ts = problem ? this.onInvalidAction(action, problem) : await this.onStep(action);
      this.order.stepped(episode, ts);
      return ts;
    } finally {
      this.order.endStep(episode);
    }
  }

  async close(): Promise<void> {
    if (this.order.close()) await this.onClose();
  }

  /** Starts an episode. `task` is a task id when the caller chose one. */
  protected abstract onReset(options: { task?: string }): Promise<TimeStep>;
  /** Executes a schema-valid action. */
  protected abstract onStep(action: Action): Promise<TimeStep>;
  /** Releases resources; called once. */
  protected async onClose(): Promise<void> {}

  /**
   * The time step for an invalid action: an explanatory observation, `info.error` set, reward 0.
   * Environments that penalise invalid calls override it.
   */
  protected onInvalidAction(_action: Action, error: ActionErrorInfo): TimeStep {
    return this.observe(`Error: ${error.message}`, 0, { error });
  }

  /** The first time step of an episode. */
  protected first(observation: string, task: TaskInfo, info: Record<string, unknown> = {}): TimeStep {
    return { observation, reward: 0, terminated: false, truncated: false, info: { ...info, task } };
  }

  /** A mid-episode time step. */
  protected observe(observation: string, reward = 0, info: Record<string, unknown> = {}): TimeStep {
    return { observation, reward, terminated: false, truncated: false, info };
  }

  /** A terminating time step; `score` in [0, 1] and `success` are reported in `info`. */
  protected end(
    observation: string,
    reward: number,
    outcome: { success: boolean; score: number; reason?: string },
    info: Record<string, unknown> = {},
  ): TimeStep {
    return {
      observation,
      reward,
      terminated: true,
      truncated: false,
      info: { ...info, reason: outcome.reason ?? 'submitted', success: outcome.success, score: outcome.score },
    };
  }

  listTasks?(split?: Split): TaskInfo[];

  countTasks?(split?: Split): number;
}
