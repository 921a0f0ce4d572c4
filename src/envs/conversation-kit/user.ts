import { GymflowError } from '../../core/errors.js';
import type { UserScript } from './scripted-user.js';

/**
 * The simulated user of a conversation environment: the other side of the agent's `respond` messages.
 * An environment holds one per participant (a customer-service env holds one; a discussion env may hold
 * several, each answering the messages addressed to it). Two kinds implement it: {@link ScriptedUser}
 * (deterministic, from the task's {@link UserScript} and the episode's seed) and {@link ModelUser} (a
 * language model prompted with the task's hidden instruction, as tau-bench's user simulator).
 */

/** The marker a model user writes to end the conversation (tau-bench's). */
export const STOP_TOKEN = '###STOP###';

/**
 * What the user knows about the episode it takes part in. `S` is the type of the structured script a scripted
 * user follows: a {@link UserScript} for the customer-service users, a domain's own for other participants (a
 * discussion's participants hold facts, not goals); a model user reads only the instruction.
 */
export interface UserEpisode<S = UserScript> {
  /** The hidden instruction: who the user is and what it wants, in words (a model user's prompt). */
  instruction: string;
  /** The user's first message, fixed by the task (the agent's task instruction quotes it). */
  opening: string;
  /** The agent's line a model user's chat starts with, answered by `opening` (default `AGENT_GREETING`, a service desk's). */
  greeting?: string;
  /** The structured form of the instruction that a scripted user follows. */
  script: S;
  /** The episode's seed for the user (its phrasing; a model server's sampling seed). */
  seed: number;
}

/** One turn of the user. */
export interface UserTurn {
  /** What the user says (without a stop marker). */
  text: string;
  /** The user ends the conversation with this turn: its goal is met, or it gives up. */
  done: boolean;
  /** Why it ended, when `done`: `satisfied` or `gave_up` (a scripted user), `stop` (a model user's marker). */
  end?: 'satisfied' | 'gave_up' | 'stop';
}

/** A simulated user (see the module comment), started with episodes whose script is an `S`. */
export interface SimulatedUser<S = UserScript> {
  /** `scripted`, or the spec of the model (`openai:gpt-4o`). */
  readonly kind: string;
  /** Starts an episode; the opening message is `episode.opening`. */
  start(episode: UserEpisode<S>): void;
  /**
   * The user's answer to the agent's message. Throws a {@link UserSimulatorError} when the user cannot
   * answer (a model server that fails or times out); the environment then truncates the episode.
   */
  reply(message: string): Promise<UserTurn>;
  /** Releases what the user holds (idempotent). */
  close?(): Promise<void>;
}

/** A simulated user that could not answer (its model server failed, timed out or said nothing). */
export class UserSimulatorError extends GymflowError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('USER_SIMULATOR_ERROR', message, options);
  }
}
