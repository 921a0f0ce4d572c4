/**
 * The conversation of an episode as its participants said it: the agent's `respond` messages and the
 * users' turns, oldest first. The environment keeps it; its policy guard, its reward (required outputs)
 * and a model user's prompt read it.
 */

/** One message of the conversation. */
export interface Turn {
  role: 'agent' | 'user';
  text: string;
  /** The participant who spoke or was spoken to, in an env with several (absent with one user). */
  speaker?: string;
}

/** The conversation so far (see the module comment). */
export class Transcript {
  private readonly list: Turn[] = [];

  /** Every turn, oldest first. */
  get turns(): readonly Turn[] {
    return this.list;
  }

  /** Appends a turn. */
  add(turn: Turn): void {
    this.list.push(turn);
  }

  /** What the agent said, oldest first. */
  agentMessages(): string[] {
    return this.list.filter((t) => t.role === 'agent').map((t) => t.text);
  }

  /** What the users said, oldest first. */
  userMessages(): string[] {
    return this.list.filter((t) => t.role === 'user').map((t) => t.text);
  }

  /**
   * The transcript as lines (`user: …`, `agent: …`), for `info` and debugging. With several participants a
   * participant's line is headed by its name (`Ana: …`) and the agent's by whom it spoke to (`agent to Ana: …`).
   */
  lines(): string[] {
    return this.list.map((t) => (t.speaker === undefined ? `${t.role}: ${t.text}` : t.role === 'agent' ? `agent to ${t.speaker}: ${t.text}` : `${t.speaker}: ${t.text}`));
  }
}
