import { Rng } from '../../core/rng.js';
import { isConfirmationRequest } from './confirmation.js';
import { mentionsAll, missingOutputs } from './text.js';
import type { SimulatedUser, UserEpisode, UserTurn } from './user.js';

/**
 * The scripted user: a deterministic simulated user that follows a {@link UserScript} — the structured
 * form of a task's hidden instruction — and the episode's seed (which only picks among phrasings).
 *
 * It pursues the script's goals in order; the task's opening message states the first. To every agent
 * message it answers, in this order:
 *
 * 1. **goal met** — an `inform` goal whose outputs the agent has now all told, a `refuse` goal the agent
 *    declined (`accept` matches), or a confirmed `action` goal followed by a message whose questions ask
 *    for no fact (the report of the action; "Is there anything else?" asks none): the user thanks the agent and states its next goal, or, after the last, ends the conversation
 *    (`done`, `end: 'satisfied'`);
 * 2. **confirmation** — a message that asks to confirm something ({@link isConfirmationRequest}) during
 *    an `action` goal: if the goal says the user changes its mind, it does so now (the goal is replaced by
 *    another, stated in the reply); else the user says yes when the message mentions everything in the
 *    goal's `confirm` groups (the order, the reason, …) and corrects the agent when not. During any other
 *    goal it says yes (asking permission to look something up is harmless);
 * 3. **facts** — a message that asks for facts (a fact's `asked` pattern matches): the user tells those,
 *    and only those (the current goal's facts first, then the script's standing ones such as its email);
 * 4. **nothing it can use** — the user nudges, restating its request; after `patience` such turns in a
 *    row it gives up (`done`, `end: 'gave_up'`).
 *
 * A `handoff` goal ends only when the environment ends the episode (a transfer to a human).
 */

/** A fact the user tells when asked for it. */
export interface ScriptFact {
  /** A name for the fact (`email`, `order`), for tests and debugging. */
  key: string;
  /** Matches an agent message that asks for the fact. */
  asked: RegExp;
  /** What the user says (one phrasing is chosen per answer from the episode's seed). */
  answers: readonly string[];
}

interface GoalBase {
  /** A name for the goal, for tests and debugging. */
  id: string;
  /** How the user states the goal when it starts pursuing it (the opening states the first goal). */
  request: readonly string[];
  /** Facts that belong to this goal (the order it is about, the reason, …). */
  facts?: readonly ScriptFact[];
}

/** The user wants the agent to do something consequential, after confirming it. */
export interface ActionGoal extends GoalBase {
  kind: 'action';
  /** A confirmation request must mention one alternative of every group for the user to say yes. */
  confirm: readonly (readonly string[])[];
  /** What the user says to a confirmation request that does not match (restating what it wants). */
  correction: readonly string[];
  /** At the first confirmation request of this goal the user changes its mind: `say`, then pursues `to`. */
  changeMind?: { say: readonly string[]; to: ScriptGoal };
}

/** The user wants to be told something: met when every output was said to it. */
export interface InformGoal extends GoalBase {
  kind: 'inform';
  outputs: readonly string[];
}

/** The user asks for something the agent must decline: met when the agent declines (`accept` matches). */
export interface RefuseGoal extends GoalBase {
  kind: 'refuse';
  accept: RegExp;
  /** What the user says when it accepts the refusal (before its next goal). */
  acknowledge: readonly string[];
}

/** The user wants a human: only the environment ends this goal (by ending the episode on a transfer). */
export interface HandoffGoal extends GoalBase {
  kind: 'handoff';
}

/** One thing the user wants. */
export type ScriptGoal = ActionGoal | InformGoal | RefuseGoal | HandoffGoal;

/** What a scripted user says besides facts and requests. Each list holds phrasings to choose from. */
export interface ScriptPhrases {
  yes: readonly string[];
  thanks: readonly string[];
  closing: readonly string[];
  giveUp: readonly string[];
  nudge: readonly string[];
}

/** The structured hidden instruction a scripted user follows. */
export interface UserScript {
  /** Facts the user knows throughout (who it is). */
  facts: readonly ScriptFact[];
  /** What it wants, in order; the task's opening message states the first. */
  goals: readonly ScriptGoal[];
  /** Messages in a row it tolerates that neither ask for a fact, confirm nor meet a goal. */
  patience: number;
  phrases: ScriptPhrases;
}

/** Phrasings that fit most users; a domain may replace any list. */
export const DEFAULT_PHRASES: ScriptPhrases = {
  yes: ['Yes, please go ahead.', 'Yes, that is correct. Please proceed.', 'Yes.'],
  thanks: ['Great, thank you.', 'Thanks!', 'Perfect, thanks.'],
  closing: ["That's all I needed. Thank you, goodbye!", "Thanks, that's everything. Bye!"],
  giveUp: ["This isn't getting anywhere. I'll try again later. Goodbye.", "I don't think you can help me. Goodbye."],
  nudge: ["Sorry, I'm not sure what you mean.", 'Could you help me with my request?', "I don't follow."],
};

/** The questions of a message: its sentences that end with `?`. */
export function questions(message: string): string[] {
  return message.split(/(?<=[.!?])\s+/).filter((s) => s.trim().endsWith('?'));
}

/** The scripted user (see the module comment). */
export class ScriptedUser implements SimulatedUser {
  readonly kind = 'scripted';
  private script: UserScript | undefined;
  private rng = new Rng(0);
  private goalIndex = 0;
  private goal: ScriptGoal | undefined;
  private changedMind = false;
  private confirmed = false;
  private unhelpful = 0;
  private finished = false;
  private readonly told: string[] = [];

  /** Starts an episode with the episode's script and seed. */
  start(episode: UserEpisode): void {
    this.script = episode.script;
    this.rng = new Rng(episode.seed);
    this.goalIndex = 0;
    this.goal = episode.script.goals[0];
    this.changedMind = false;
    this.confirmed = false;
    this.unhelpful = 0;
    this.finished = false;
    this.told.length = 0;
  }

  /** The goal the user pursues now (undefined once it is done), for tests. */
  get currentGoal(): ScriptGoal | undefined {
    return this.finished ? undefined : this.goal;
  }

  /** Answers the agent's message (see the module comment). */
  async reply(message: string): Promise<UserTurn> {
    return this.answer(message);
  }

  /** The synchronous core of {@link reply}. */
  answer(message: string): UserTurn {
    const script = this.script;
    const goal = this.goal;
    if (!script || !goal || this.finished) return { text: this.say(DEFAULT_PHRASES.closing), done: true, end: 'satisfied' };
    this.told.push(message);
    const p = script.phrases;

    // 1. The goal is met by this message.
    if (goal.kind === 'inform' && missingOutputs(this.told, goal.outputs).length === 0) return this.advance(this.say(p.thanks));
    if (goal.kind === 'refuse' && goal.accept.test(message)) return this.advance(this.say(goal.acknowledge));

    // 2. A confirmation request.
    const asked = this.askedFacts(message);
    if (isConfirmationRequest(message)) {
      this.unhelpful = 0;
      if (goal.kind !== 'action') return this.turn(this.say(p.yes));
      if (goal.changeMind && !this.changedMind) {
        this.changedMind = true;
        this.goal = goal.changeMind.to;
        this.confirmed = false;
        return this.turn(this.say(goal.changeMind.say));
      }
      if (mentionsAll(message, goal.confirm)) {
        this.confirmed = true;
        return this.turn(this.say(p.yes));
      }
      this.confirmed = false;
      return this.turn(this.say(goal.correction));
    }
    if (goal.kind === 'action' && this.confirmed) {
      // After the yes, a message whose questions ask for no fact reports the action: the goal is met.
      const more = this.askedFacts(questions(message).join(' '));
      if (more.length > 0) return this.facts(more);
      return this.advance(this.say(p.thanks));
    }

    // 3. Facts asked for.
    if (asked.length > 0) return this.facts(asked);

    // 4. Nothing the user can use.
    this.unhelpful += 1;
    if (this.unhelpful > script.patience) {
      this.finished = true;
      return { text: this.say(p.giveUp), done: true, end: 'gave_up' };
    }
    return this.turn(`${this.say(p.nudge)} ${this.say(goal.request)}`);
  }

  /** The facts a message asks for: the goal's first, then the standing ones, one per key. */
  private askedFacts(message: string): ScriptFact[] {
    const out: ScriptFact[] = [];
    const keys = new Set<string>();
    for (const fact of [...(this.goal?.facts ?? []), ...(this.script?.facts ?? [])]) {
      if (keys.has(fact.key) || !fact.asked.test(message)) continue;
      keys.add(fact.key);
      out.push(fact);
    }
    return out;
  }

  private facts(asked: readonly ScriptFact[]): UserTurn {
    this.unhelpful = 0;
    return this.turn(asked.map((f) => this.say(f.answers)).join(' '));
  }

  /** The current goal is met: thank, then state the next goal or end the conversation. */
  private advance(prefix: string): UserTurn {
    const script = this.script as UserScript;
    this.goalIndex += 1;
    this.confirmed = false;
    this.changedMind = false;
    this.unhelpful = 0;
    this.told.length = 0;
    const next = script.goals[this.goalIndex];
    if (next === undefined) {
      this.finished = true;
      return { text: `${prefix} ${this.say(script.phrases.closing)}`, done: true, end: 'satisfied' };
    }
    this.goal = next;
    return this.turn(`${prefix} ${this.say(next.request)}`);
  }

  private turn(text: string): UserTurn {
    return { text, done: false };
  }

  private say(options: readonly string[]): string {
    return options.length === 1 ? (options[0] as string) : this.rng.pick(options);
  }
}
