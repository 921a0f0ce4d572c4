import { mixSeed, Rng } from '../../core/rng.js';
import type { Split, TaskInfo } from '../../core/types.js';
import { indexedTaskBank } from '../shared/task-bank.js';
import { type Fact, factText, ruleChoice, tally } from './facts.js';
import { type ParticipantScript, participantInstruction, type Trait } from './participant.js';
import { PARTICIPANT_NAMES, type Scenario, SCENARIOS } from './scenarios.js';
import { defined } from '../../core/defined.js';

/**
 * The task bank of `gymflow/discussion-v0`: hidden-profile discussions (Stasser & Titus 1985). Task `i` of a
 * split is regenerated from its id alone (`discussion-heldout-00007`): its scenario is the split's `i mod n`-th,
 * and a seed of the split's own stream draws the rest:
 *
 * - 2–4 participants (names from the split's list) with traits (`participant.ts`): the first open, the others
 *   open, reticent or opinionated (at most one opinionated);
 * - three options in three roles: the **favourite**, which the briefing (the shared facts) favours; the
 *   **right** option; and a third that trails both;
 * - the briefing: the favourite leads the right option by `k − 1` (k participants), the third behind the favourite;
 * - one **decisive** private fact per participant, each for the right option or against the favourite, so that
 *   pooling all of them puts the right option one ahead of the favourite, and leaving out any one participant's
 *   ties them (the rule then decides nothing: every participant must be heard);
 * - sometimes a non-decisive private fact against the third option, and an opinionated participant's hearsay
 *   against the right option (counted, it would tie the decision again).
 *
 * The generator checks these properties with the rule itself ({@link ruleChoice}) and redraws when a draw
 * misses one. The splits use disjoint scenarios and names, so no held-out hidden instruction occurs in training.
 */

/** The domain profile these tasks belong to. */
export const DISCUSSION_DOMAIN = 'discussion';

/** Tasks per split. */
export const DISCUSSION_TASK_COUNTS: Readonly<Record<Split, number>> = { train: 240, heldout: 60 };

/** A participant of a task. */
export interface TaskParticipant {
  name: string;
  trait: Trait;
  /** What only they know (their decisive fact first). */
  facts: Fact[];
  hearsay?: Fact;
  /** Their first words, fixed by the task (whoever plays them). */
  opening: string;
  /** Their hidden instruction in words (a model participant's prompt). */
  hidden: string;
  /** The same, as the scripted participant follows it. */
  script: ParticipantScript;
}

/** A task of the bank. */
export interface DiscussionTask {
  id: string;
  split: Split;
  seed: number;
  scenario: Scenario;
  /** The options in the order the instruction lists them. */
  options: string[];
  /** The option the briefing favours (the wrong one). */
  favourite: string;
  /** The option the pooled facts imply. */
  correct: string;
  /** The facts everyone has read (in the instruction). */
  shared: Fact[];
  participants: TaskParticipant[];
  /** One private fact per participant; together they decide (see the module comment). */
  decisive: Fact[];
  /** The rule's totals over the briefing and every private fact. */
  totals: Record<string, number>;
  /** What the agent is told: the question, the options, the topics, the briefing, who takes part, the rule and the tools. */
  instruction: string;
  /** The agent's first observation: the participants' openings. */
  opening: string;
}

const STREAM_BASE: Readonly<Record<Split, number>> = { train: 0x44000000, heldout: 0x4d000000 };
const ATTEMPTS = 64;

const OPENINGS: Readonly<Record<Trait, readonly string[]>> = {
  open: ["Happy to share what I know about the {n}s.", "Glad we're doing this; I've looked into the {n}s a bit.", "Let's get into it; ask me anything about the {n}s."],
  reticent: ["I'll mostly listen, I think.", "I'm not sure I have much to contribute.", "I'll follow the discussion for now."],
  opinionated: ['{o} is the obvious choice to me; the briefing says it all.', "I don't see why we need a long meeting: {o} is the best {n}."],
};

class Draw {
  private readonly used = new Set<string>();
  private next = 1;
  constructor(
    private readonly rng: Rng,
    private readonly scenario: Scenario,
  ) {}

  /** A fact about `option` of `sign` whose cue no other fact of the task has. */
  fact(option: string, sign: 1 | -1): Fact {
    const pool = this.scenario.topics.flatMap((t) => (sign > 0 ? t.good : t.bad).map((cue) => ({ topic: t.name, cue }))).filter((c) => !this.used.has(c.cue));
    if (pool.length === 0) throw new RangeError('out of cues');
    const { topic, cue } = this.rng.pick(pool);
    this.used.add(cue);
    return { id: `f${this.next++}`, option, topic, sign, cue };
  }

  facts(option: string, sign: 1 | -1, n: number): Fact[] {
    return Array.from({ length: n }, () => this.fact(option, sign));
  }
}

function fill(template: string, vars: Record<string, string>): string {
  return template.replace(/\{(\w+)\}/g, (_m, k: string) => vars[k] ?? '');
}

/** One draw of a task; undefined when it misses a property (the caller redraws). */
function draw(id: string, split: Split, scenario: Scenario, seed: number): DiscussionTask | undefined {
  const rng = new Rng(seed);
  const k = rng.int(2, 4);
  const [favourite, correct, third] = rng.shuffle(scenario.options).slice(0, 3) as [string, string, string];
  const names = rng.shuffle(PARTICIPANT_NAMES[split]).slice(0, k);
  const traits: Trait[] = ['open'];
  while (traits.length < k) {
    const pool: Trait[] = traits.includes('opinionated') ? ['open', 'reticent'] : ['open', 'reticent', 'opinionated'];
    traits.push(rng.pick(pool));
  }
  const order = rng.shuffle(traits.map((_, i) => i));
  const d = new Draw(rng, scenario);
  let shared: Fact[];
  let decisive: Fact[];
  let extra: Fact | undefined;
  let hearsay: Fact | undefined;
  try {
    // The briefing: the favourite leads the right option by k − 1.
    const favGood = rng.int(1, 2);
    const lead = favGood - (k - 1);
    const right = lead >= 0 ? d.facts(correct, 1, lead) : d.facts(correct, -1, -lead);
    const forRight = rng.int(0, k);
    decisive = rng.shuffle([...d.facts(correct, 1, forRight), ...d.facts(favourite, -1, k - forRight)]);
    const rightTotal = lead + forRight;
    // The third option ends at least two behind the right one, and stays behind the favourite in the briefing.
    const withExtra = rng.next() < 0.5;
    let thirdTotal = rightTotal - 2 - rng.int(0, 1);
    while (thirdTotal + (withExtra ? 1 : 0) >= favGood) thirdTotal -= 1;
    const thirdShared = thirdTotal + (withExtra ? 1 : 0);
    const thirdFacts = thirdShared === 0 ? (rng.next() < 0.5 ? [d.fact(third, 1), d.fact(third, -1)] : []) : d.facts(third, thirdShared > 0 ? 1 : -1, Math.abs(thirdShared));
    shared = rng.shuffle([...d.facts(favourite, 1, favGood), ...right, ...thirdFacts]);
    extra = withExtra ? d.fact(third, -1) : undefined;
    hearsay = traits.includes('opinionated') ? d.fact(correct, -1) : undefined;
  } catch (err) {
    if (err instanceof RangeError) return undefined;
    throw err;
  }
  const options = rng.shuffle([favourite, correct, third]);
  const holderOfExtra = rng.int(0, k - 1);
  const participants: TaskParticipant[] = names.map((name, i) => {
    const trait = traits[order[i] as number] as Trait;
    const facts = [decisive[i] as Fact, ...(extra && i === holderOfExtra ? [extra] : [])];
    const script: ParticipantScript = {
      name,
      trait,
      facts,
      ...(trait === 'opinionated' && hearsay ? { hearsay } : {}),
      shared,
      topics: scenario.topics,
      favourite,
      noun: scenario.noun,
    };
    const opening = fill(rng.pick(OPENINGS[trait]), { n: scenario.noun, o: favourite });
    return { name, trait, facts, ...defined({ hearsay: script.hearsay }), opening, script, hidden: participantInstruction(script, scenario.question, names.filter((n) => n !== name)) };
  });

  // The properties the module comment promises, checked with the rule itself.
  const all = [...shared, ...participants.flatMap((p) => p.facts)];
  if (ruleChoice(shared, options) !== favourite || ruleChoice(all, options) !== correct) return undefined;
  for (const p of participants) {
    if (ruleChoice(all.filter((f) => !p.facts.includes(f)), options) === correct) return undefined;
  }
  if (hearsay && ruleChoice([...all, hearsay], options) === correct) return undefined;

  const instruction = [
    `You facilitate a committee meeting. ${scenario.question}`,
    `The ${scenario.noun}s: ${options.join(', ')}.`,
    `The committee weighs each ${scenario.noun}'s ${scenario.topics.map((t) => t.name).join(', ')}.`,
    '',
    'The briefing every member has read:',
    ...shared.map((f) => `- ${factText(f)}.`),
    '',
    `Taking part: ${names.join(', ')}. Members may know facts that are not in the briefing. They tell them only when asked about the topic a fact concerns; some keep quiet in the group and must be asked directly, some only when asked a second time, and some argue for a ${scenario.noun} without facts.`,
    '',
    `The decision rule: every fact in a ${scenario.noun}'s favour counts +1 and every fact against it -1, over the briefing and the facts members state as known. Opinions and hearsay ("I heard that ...") do not count. Choose the ${scenario.noun} with the highest total.`,
    '',
    'Tools: `address {participant, message}` asks one member; `ask_group {question}` asks everyone; `summarise {summary}` posts a summary the members check; `decide {choice, rationale}` ends the meeting: the choice must be the rule\'s, reached after hearing the members, and the rationale must quote the members\' facts that decided it.',
  ].join('\n');
  const opening = [`The meeting opens: ${scenario.question}`, ...participants.map((p) => `${p.name}: ${p.opening}`)].join('\n');
  return { id, split, seed, scenario, options, favourite, correct, shared, participants, decisive, totals: tally(all, options), instruction, opening };
}

function generateTask(split: Split, index: number): DiscussionTask {
  const id = bank.id(split, index);
  const scenarios = SCENARIOS[split];
  const scenario = scenarios[index % scenarios.length] as Scenario;
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const task = draw(id, split, scenario, mixSeed(STREAM_BASE[split], index, attempt));
    if (task) return task;
  }
  throw new Error(`${id}: no draw met the hidden-profile properties in ${ATTEMPTS} attempts`);
}

const bank = indexedTaskBank('discussion', DISCUSSION_TASK_COUNTS, generateTask);

/** The id of the `index`-th task of `split`. */
export function discussionTaskId(split: Split, index: number): string {
  return bank.id(split, index);
}

/** The task with this id. Throws a `TaskError` for an id that is malformed or out of range. */
export function getDiscussionTask(id: string): DiscussionTask {
  return bank.get(id);
}

/** Every task of a split (both splits when omitted), in index order; generated on first use. */
export function listDiscussionTasks(split?: Split): DiscussionTask[] {
  return bank.list(split);
}

/** The public description of a task: never who knows what, the traits or the answer. */
export function discussionTaskInfo(task: DiscussionTask): TaskInfo {
  return {
    id: task.id,
    domain: DISCUSSION_DOMAIN,
    instruction: task.instruction,
    split: task.split,
    metadata: { scenario: task.scenario.id, participants: task.participants.map((p) => p.name), options: task.options },
  };
}
