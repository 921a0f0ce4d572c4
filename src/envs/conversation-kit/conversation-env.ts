import { BaseEnv } from '../../core/base-env.js';
import type { Action, TaskInfo, TimeStep } from '../../core/types.js';
import { RESPOND_TOOL_NAME } from './respond-tool.js';
import { Transcript } from './transcript.js';
import { type SimulatedUser, type UserEpisode, type UserTurn, UserSimulatorError } from './user.js';

/**
 * The base of the conversation family's environments: an agent that serves a simulated user through
 * messages (`respond`) and the domain's tools. It owns what every such env shares, so a domain writes
 * only its state, tools and reward:
 *
 * - **reset** asks the domain for the episode ({@link ConversationEnv.begin}: the public task, the user's
 *   hidden instruction, script and opening), starts the user with a seed drawn from the episode's RNG
 *   (same seed, same conversation) and returns the opening as the first observation;
 * - **`respond {content}`** sends the message to the user; the observation is the user's reply. A user
 *   that ends the conversation (its goal met, given up, or a model's `###STOP###`) terminates the
 *   episode: reason `user_stop` (`user_gave_up` when it gave up), scored by {@link ConversationEnv.outcome};
 * - **a user that fails** (its model server errors or times out after retries) truncates the episode:
 *   reason `user_error`, the message in `info.user_error`, reward 0 — never an exception;
 * - **every other tool** goes to {@link ConversationEnv.onTool}; a domain ends the episode itself with
 *   {@link ConversationEnv.conclude} (a transfer to a human, say).
 *
 * The transcript ({@link ConversationEnv.transcript}) holds what was said, for the domain's policy guard and
 * reward, and is reported in `info.transcript` when the episode ends.
 */
export abstract class ConversationEnv extends BaseEnv {
  /** The conversation of the current episode. */
  protected transcript = new Transcript();

  /** @param user The simulated user (see `user-spec.ts` `createUser`); one per env, started per episode. */
  constructor(protected readonly user: SimulatedUser) {
    super();
  }

  /** The episode's public task and what the user is told (everything but the seed). */
  protected abstract begin(taskId: string | undefined): { task: TaskInfo; user: Omit<UserEpisode, 'seed'> };

  /** Executes a schema-valid action other than `respond`. */
  protected abstract onTool(action: Action): TimeStep | Promise<TimeStep>;

  /** The reward of the episode as it ends, with the terms that make it up (merged into `info`). */
  protected abstract outcome(): { reward: number; success: boolean; info: Record<string, unknown> };

  /** Called after every user turn (a domain's guard reads confirmations here). */
  protected onUserTurn(_agentMessage: string, _turn: UserTurn): void {}

  protected async onReset(options: { task?: string }): Promise<TimeStep> {
    this.transcript = new Transcript();
    const { task, user } = this.begin(options.task);
    this.user.start({ ...user, seed: this.rng.int(0, 2 ** 31 - 1) });
    this.transcript.add({ role: 'user', text: user.opening });
    return this.first(user.opening, task, { user: this.user.kind });
  }

  protected async onStep(action: Action): Promise<TimeStep> {
    if (action.tool !== RESPOND_TOOL_NAME) return this.onTool(action);
    const message = String(action.params.content);
    this.transcript.add({ role: 'agent', text: message });
    let turn: UserTurn;
    try {
      turn = await this.user.reply(message);
    } catch (err) {
      if (!(err instanceof UserSimulatorError)) throw err;
      return {
        observation: `The conversation stopped: the simulated user could not answer (${err.message}).`,
        reward: 0,
        terminated: false,
        truncated: true,
        info: { reason: 'user_error', user_error: err.message, success: false, score: 0, transcript: this.transcript.lines() },
      };
    }
    this.transcript.add({ role: 'user', text: turn.text });
    this.onUserTurn(message, turn);
    if (turn.done) return this.conclude(turn.text, turn.end === 'gave_up' ? 'user_gave_up' : 'user_stop');
    return this.observe(turn.text);
  }

  /** Ends the episode now with `observation`, scored by {@link ConversationEnv.outcome}. */
  protected conclude(observation: string, reason: string): TimeStep {
    const o = this.outcome();
    return this.end(observation, o.reward, { success: o.success, score: o.reward, reason }, { ...o.info, transcript: this.transcript.lines() });
  }

  protected override async onClose(): Promise<void> {
    await this.user.close?.();
  }
}
