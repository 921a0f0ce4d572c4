import { BaseEnv } from '../../core/base-env.js';
import { ConfigError } from '../../core/errors.js';
import type { Action, TaskInfo, TimeStep } from '../../core/types.js';
import { RESPOND_TOOL_NAME } from './respond-tool.js';
import type { UserScript } from './scripted-user.js';
import { Transcript } from './transcript.js';
import { type SimulatedUser, type UserEpisode, type UserTurn, UserSimulatorError } from './user.js';

/**
 * The base of the conversation family's environments: an agent that serves a simulated user through
 * messages (`respond`) and the domain's tools, or talks with several named participants through the
 * domain's own tools. It owns what every such env shares, so a domain writes only its state, tools and reward:
 *
 * - **reset** asks the domain for the episode ({@link ConversationEnv.begin}: the public task, and the user's
 *   hidden instruction, script and opening — or one such episode per participant and the opening the agent
 *   sees), starts each user with a seed drawn from the episode's RNG (same seed, same conversation) and
 *   returns the opening as the first observation;
 * - **`respond {content}`** (one user) sends the message to the user; the observation is the user's reply. A
 *   user that ends the conversation (its goal met, given up, or a model's `###STOP###`) terminates the
 *   episode: reason `user_stop` (`user_gave_up` when it gave up), scored by {@link ConversationEnv.outcome};
 * - **a participant's reply** (several): a domain's tool sends a message to one participant with
 *   {@link ConversationEnv.hear} and gets its turn back;
 * - **a user that fails** (its model server errors or times out after retries) truncates the episode:
 *   reason `user_error`, the message in `info.user_error`, reward 0 — never an exception;
 * - **every other tool** goes to {@link ConversationEnv.onTool}; a domain ends the episode itself with
 *   {@link ConversationEnv.conclude} (a transfer to a human, a decision).
 *
 * The transcript ({@link ConversationEnv.transcript}) holds what was said, for the domain's policy guard and
 * reward, and is reported in `info.transcript` when the episode ends.
 */

/** What {@link ConversationEnv.begin} returns for an env with one user. */
export interface OneUserEpisode<S> {
  task: TaskInfo;
  /** What the user is told (everything but the seed). */
  user: Omit<UserEpisode<S>, 'seed'>;
}

/** What {@link ConversationEnv.begin} returns for an env with several participants. */
export interface GroupEpisode<S> {
  task: TaskInfo;
  /** The agent's first observation (the participants' openings, as the domain presents them). */
  opening: string;
  /** What each participant is told, by name, in speaking order. */
  participants: Readonly<Record<string, Omit<UserEpisode<S>, 'seed'>>>;
}

/** The result of {@link ConversationEnv.hear}: the participant's turn, or the time step that ends the episode. */
export type Heard = { turn: UserTurn; stopped?: undefined } | { turn?: undefined; stopped: TimeStep };

/** The base of the conversation family's environments (see the module comment). */
export abstract class ConversationEnv<S = UserScript> extends BaseEnv {
  /** The conversation of the current episode. */
  protected transcript = new Transcript();
  /** The participants of the current episode by name (one, `user`, in a one-user env). */
  protected readonly participants = new Map<string, SimulatedUser<S>>();
  private readonly made = new Map<string, SimulatedUser<S>>();
  private readonly single: SimulatedUser<S> | undefined;
  private readonly factory: ((name: string) => SimulatedUser<S>) | undefined;

  /**
   * @param users The simulated user of a one-user env (see `user-spec.ts` `createUser`), started per episode;
   *   or, for an env with several participants, a function that makes the participant of a name (called once
   *   per name; the users are reused across episodes and closed with the env).
   */
  constructor(users: SimulatedUser<S> | ((name: string) => SimulatedUser<S>)) {
    super();
    if (typeof users === 'function') this.factory = users;
    else this.single = users;
  }

  /** The episode's public task and what the user (or each participant) is told. */
  protected abstract begin(taskId: string | undefined): OneUserEpisode<S> | GroupEpisode<S>;

  /** Executes a schema-valid action other than `respond` (in a one-user env). */
  protected abstract onTool(action: Action): TimeStep | Promise<TimeStep>;

  /** The reward of the episode as it ends, with the terms that make it up (merged into `info`). */
  protected abstract outcome(): { reward: number; success: boolean; info: Record<string, unknown> };

  /** Called after every user turn (a domain's guard reads confirmations here); `name` is the participant's. */
  protected onUserTurn(_agentMessage: string, _turn: UserTurn, _name: string): void {}

  protected async onReset(options: { task?: string }): Promise<TimeStep> {
    this.transcript = new Transcript();
    this.participants.clear();
    const begun = this.begin(options.task);
    if ('user' in begun) {
      const user = this.single ?? this.participant('user');
      user.start({ ...begun.user, seed: this.rng.int(0, 2 ** 31 - 1) });
      this.participants.set('user', user);
      this.transcript.add({ role: 'user', text: begun.user.opening });
      return this.first(begun.user.opening, begun.task, { user: user.kind });
    }
    if (this.single) throw new ConfigError(`${begun.task.id}: a discussion of several participants needs a participant factory, not one user`);
    for (const [name, episode] of Object.entries(begun.participants)) {
      const user = this.participant(name);
      user.start({ ...episode, seed: this.rng.int(0, 2 ** 31 - 1) });
      this.participants.set(name, user);
      this.transcript.add({ role: 'user', speaker: name, text: episode.opening });
    }
    const kinds = [...new Set([...this.participants.values()].map((u) => u.kind))];
    return this.first(begun.opening, begun.task, { user: kinds.join(','), participants: [...this.participants.keys()] });
  }

  protected async onStep(action: Action): Promise<TimeStep> {
    if (action.tool !== RESPOND_TOOL_NAME || this.factory) return this.onTool(action);
    const message = String(action.params.content);
    this.transcript.add({ role: 'agent', text: message });
    const heard = await this.hear('user', message);
    if (heard.stopped) return heard.stopped;
    const { turn } = heard;
    if (turn.done) return this.conclude(turn.text, turn.end === 'gave_up' ? 'user_gave_up' : 'user_stop');
    return this.observe(turn.text);
  }

  /**
   * Sends `message` to the participant `name` and records its reply in the transcript (the caller records
   * the agent's message, once for a message to the whole group). A participant that fails gives the
   * truncating time step (reason `user_error`) instead of a turn.
   */
  protected async hear(name: string, message: string): Promise<Heard> {
    const user = this.participants.get(name);
    if (!user) throw new ConfigError(`no participant '${name}' in this episode; participants: ${[...this.participants.keys()].join(', ')}`);
    let turn: UserTurn;
    try {
      turn = await user.reply(message);
    } catch (err) {
      if (!(err instanceof UserSimulatorError)) throw err;
      const who = this.factory ? `participant ${name}` : 'the simulated user';
      return {
        stopped: {
          observation: `The conversation stopped: ${who} could not answer (${err.message}).`,
          reward: 0,
          terminated: false,
          truncated: true,
          info: { reason: 'user_error', user_error: err.message, success: false, score: 0, transcript: this.transcript.lines() },
        },
      };
    }
    this.transcript.add(this.factory ? { role: 'user', speaker: name, text: turn.text } : { role: 'user', text: turn.text });
    this.onUserTurn(message, turn, name);
    return { turn };
  }

  /** Ends the episode now with `observation`, scored by {@link ConversationEnv.outcome}. */
  protected conclude(observation: string, reason: string): TimeStep {
    const o = this.outcome();
    return this.end(observation, o.reward, { success: o.success, score: o.reward, reason }, { ...o.info, transcript: this.transcript.lines() });
  }

  protected override async onClose(): Promise<void> {
    await this.single?.close?.();
    for (const user of this.made.values()) await user.close?.();
  }

  private participant(name: string): SimulatedUser<S> {
    let user = this.made.get(name);
    if (!user) {
      user = (this.factory as (name: string) => SimulatedUser<S>)(name);
      this.made.set(name, user);
    }
    return user;
  }
}
