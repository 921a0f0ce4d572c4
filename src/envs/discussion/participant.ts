import { Rng } from '../../core/rng.js';
import { mentions } from '../conversation-kit/text.js';
import type { SimulatedUser, UserEpisode, UserTurn } from '../conversation-kit/user.js';
import { type Fact, factText } from './facts.js';
import { asksAbout, type Topic } from './scenarios.js';

/**
 * A participant of a hidden-profile discussion, played by a script: it holds private facts and tells them only
 * when asked about their topic, in the way its **trait** allows:
 *
 * - `open`: tells its facts on a topic whenever a question about the topic reaches it, to the group or to it;
 * - `reticent`: keeps quiet in the group, and holds back the first time it is asked about a topic directly;
 *   the second direct question about the topic draws its facts out ("asked twice");
 * - `opinionated`: answers the group with its (wrong) opinion that the briefing's favourite is the best option,
 *   tells its facts when asked about their topic directly, and passes on a piece of hearsay against the right
 *   option (marked "I heard that … but I haven't seen it myself"), which the decision rule does not count.
 *
 * A question about a topic on which it holds nothing new gets a briefing fact of that topic, or "nothing to
 * add"; a question about no topic gets a prompt to name one (with the opinion, from an opinionated participant).
 * A summary ({@link SUMMARY_PREFIX}) is checked against what it has told: it names a told fact the summary
 * leaves out (the summary must quote the fact's cue), else agrees. It never ends the conversation: the agent's
 * `decide` does. The seed picks phrasings only.
 */

/** A participant's disposition (see the module comment). */
export type Trait = 'open' | 'reticent' | 'opinionated';

/** The traits, for task generation and tests. */
export const TRAITS: readonly Trait[] = ['open', 'reticent', 'opinionated'];

/** How the env marks a question to the whole group when it passes it to each participant. */
export const GROUP_PREFIX = 'To everyone: ';
/** How the env marks a summary posted to the group. */
export const SUMMARY_PREFIX = 'Summary for the group: ';

/** The structured hidden instruction a scripted participant follows. */
export interface ParticipantScript {
  name: string;
  trait: Trait;
  /** What only this participant knows. */
  facts: readonly Fact[];
  /** A claim it heard but did not see (an opinionated participant's; it does not count). */
  hearsay?: Fact;
  /** The briefing everyone read. */
  shared: readonly Fact[];
  topics: readonly Topic[];
  /** The option the briefing favours, which an opinionated participant argues for. */
  favourite: string;
  /** What an option is called (`candidate`). */
  noun: string;
}

const TELL = ['I know that {f}.', 'From what I have seen, {f}.', 'One thing you may not know: {f}.'];
const HOLD_BACK = ["Hmm, I'm not sure that's relevant.", "I'd rather not speculate on that.", "I don't think I have much to add there."];
const QUIET = ["I'll let the others speak to that.", 'Nothing from me on that for now.'];
const NOTHING = ["I've nothing to add on the {t} beyond what we have.", "That's all I know about the {t}."];
const BRIEFING = ['As the briefing says, {f}.', 'Well, the briefing says {f}.'];
const WHICH = ['Which aspect do you want to hear about: {ts}?', 'What should we look at: {ts}?'];
const OPINION = ['Honestly, {o} is clearly the best {n}; the briefing says it all.', 'I am convinced {o} is the right {n}.'];
const AGREED = ['Agreed.', 'That matches what I heard.'];
const LEFT_OUT = ['You left out that {f}.', 'The summary misses that {f}.'];

/** The scripted participant (see the module comment). */
export class ScriptedParticipant implements SimulatedUser<ParticipantScript> {
  readonly kind = 'scripted';
  private script: ParticipantScript | undefined;
  private rng = new Rng(0);
  private readonly told = new Set<string>();
  private readonly directAsks = new Map<string, number>();
  private saidHearsay = false;

  /** Starts an episode with the participant's script and seed. */
  start(episode: UserEpisode<ParticipantScript>): void {
    this.script = episode.script;
    this.rng = new Rng(episode.seed);
    this.told.clear();
    this.directAsks.clear();
    this.saidHearsay = false;
  }

  /** The ids of the private facts it has told so far (tests). */
  get toldFacts(): readonly string[] {
    return [...this.told];
  }

  /** Answers a message (see the module comment). */
  async reply(message: string): Promise<UserTurn> {
    return { text: this.answer(message), done: false };
  }

  /** The synchronous core of {@link reply}. */
  answer(message: string): string {
    const s = this.script;
    if (!s) return this.say(WHICH, { ts: '' });
    if (message.startsWith(SUMMARY_PREFIX)) return this.review(s, message.slice(SUMMARY_PREFIX.length));
    const group = message.startsWith(GROUP_PREFIX);
    const topics = s.topics.filter((t) => asksAbout(message, t));
    if (topics.length === 0) {
      const which = this.say(WHICH, { ts: s.topics.map((t) => t.name).join(', ') });
      return s.trait === 'opinionated' ? `${this.opinion(s)} ${which}` : which;
    }
    if (!group) for (const t of topics) this.directAsks.set(t.name, (this.directAsks.get(t.name) ?? 0) + 1);
    const names = new Set(topics.map((t) => t.name));
    const fresh = s.facts.filter((f) => names.has(f.topic) && !this.told.has(f.id));
    const tellable = fresh.filter((f) => this.tells(s.trait, group, f.topic));
    const parts: string[] = [];
    if (tellable.length > 0) {
      for (const f of tellable) {
        this.told.add(f.id);
        parts.push(this.say(TELL, { f: factText(f) }));
      }
    } else if (fresh.length > 0) {
      parts.push(s.trait === 'opinionated' ? this.opinion(s) : this.say(group ? QUIET : HOLD_BACK, {}));
    } else if (s.trait === 'opinionated' && group) {
      parts.push(this.opinion(s));
    } else {
      const briefing = s.shared.filter((f) => names.has(f.topic));
      parts.push(briefing.length > 0 ? this.say(BRIEFING, { f: factText(this.rng.pick(briefing)) }) : this.say(NOTHING, { t: topics.map((t) => t.name).join(' or the ') }));
    }
    if (s.hearsay && !this.saidHearsay && names.has(s.hearsay.topic)) {
      this.saidHearsay = true;
      parts.push(`I heard that ${factText(s.hearsay)}, but I haven't seen it myself.`);
    }
    return parts.join(' ');
  }

  /** Whether a participant of `trait` tells a fact on `topic` now. */
  private tells(trait: Trait, group: boolean, topic: string): boolean {
    if (trait === 'open') return true;
    if (group) return false;
    return trait === 'opinionated' || (this.directAsks.get(topic) ?? 0) >= 2;
  }

  /** The answer to a summary: the first told fact it leaves out, or agreement. */
  private review(s: ParticipantScript, summary: string): string {
    const missing = s.facts.find((f) => this.told.has(f.id) && !mentions(summary, f.cue));
    if (missing) return this.say(LEFT_OUT, { f: factText(missing) });
    return s.trait === 'opinionated' ? `${this.say(AGREED, {})} ${this.opinion(s)}` : this.say(AGREED, {});
  }

  private opinion(s: ParticipantScript): string {
    return this.say(OPINION, { o: s.favourite, n: s.noun });
  }

  private say(options: readonly string[], vars: Record<string, string>): string {
    const template = options.length === 1 ? (options[0] as string) : this.rng.pick(options);
    return template.replace(/\{(\w+)\}/g, (_m, k: string) => vars[k] ?? '');
  }
}

/** The hidden instruction of a participant in words: a model participant's prompt (the script's content). */
export function participantInstruction(s: ParticipantScript, question: string, others: readonly string[]): string {
  const behaviour: Record<Trait, string> = {
    open: 'You are open: whenever a question about a topic reaches you, in the group or directly, tell what you know about that topic.',
    reticent:
      'You are reticent: in group questions you keep your facts to yourself; the first time the facilitator asks you directly about a topic you hold back ("I\'m not sure that\'s relevant"), and you tell your facts on that topic only when asked about it directly a second time.',
    opinionated: `You are opinionated: you are convinced that ${s.favourite} is the best ${s.noun} and say so in group questions; you tell your facts only when the facilitator asks you directly about their topic.`,
  };
  return [
    `You are ${s.name}, a member of a committee that must decide: ${question} The other members are ${others.join(', ')}; a facilitator (the agent) leads the meeting. The options are weighed on: ${s.topics.map((t) => t.name).join(', ')}.`,
    `The briefing everyone has read: ${s.shared.map((f) => `${factText(f)}.`).join(' ')}`,
    `What only you know: ${s.facts.map((f) => `${factText(f)} (${f.topic}).`).join(' ')}`,
    ...(s.hearsay ? [`You also heard, without seeing it yourself, that ${factText(s.hearsay)}; if you pass it on, say that you only heard it.`] : []),
    behaviour[s.trait],
    `When you tell a fact, use its exact wording ("${s.facts[0] ? factText(s.facts[0]) : ''}"). Never invent facts. Messages that begin "${GROUP_PREFIX.trim()}" go to the whole group; a message that begins "${SUMMARY_PREFIX.trim()}" is the facilitator's summary: point out any fact you told that it leaves out, else agree. Answer in one or two sentences.`,
  ].join('\n');
}
