import type { Split } from '../../core/types.js';

/**
 * The scenarios of `gymflow/discussion-v0`: a committee choosing one of several options. Each scenario names
 * its question, the options it draws three from, and the topics the committee weighs; each topic has the
 * keywords that make a question "about" it and the wording of facts for and against an option (`{o}` is the
 * option). A fact's wording after the option is its **cue**: the words a rationale quotes to cite it.
 *
 * The splits use disjoint scenarios (training: a hire, an office, a software vendor; held-out: a conference
 * venue, a research proposal) and disjoint participant names, so no held-out question, option, fact or
 * participant occurs in training.
 */

/** A topic the committee weighs. */
export interface Topic {
  /** Its name, as the task instruction lists it. */
  name: string;
  /** A question mentioning any of these (case-insensitive) is about the topic. */
  keywords: readonly string[];
  /** Cues of facts in an option's favour (`{o} <cue>`). */
  good: readonly string[];
  /** Cues of facts against an option. */
  bad: readonly string[];
}

/** A decision a committee takes. */
export interface Scenario {
  id: string;
  /** The question, e.g. "Which candidate should we hire as engineering lead?". */
  question: string;
  /** What an option is called (`candidate`). */
  noun: string;
  /** The options the task draws three from. */
  options: readonly string[];
  topics: readonly Topic[];
}

const HIRE: Scenario = {
  id: 'hire',
  question: 'Which candidate should the team hire as its new engineering lead?',
  noun: 'candidate',
  options: ['Okafor', 'Lindqvist', 'Moreau', 'Tanaka', 'Haddad'],
  topics: [
    {
      name: 'experience',
      keywords: ['experience', 'track record', 'background'],
      good: ['has led two teams of this size', 'shipped a payments platform on schedule', 'ran the on-call rotation at a large bank'],
      bad: ['has never managed more than two people', 'left the last project halfway through', 'has no experience with our stack'],
    },
    {
      name: 'references',
      keywords: ['reference', 'referee', 'former colleague'],
      good: ['got glowing references from both former managers', 'was called the best mentor on the team by a referee', 'was rehired twice by the same employer'],
      bad: ['had a referee mention missed deadlines', 'could not name a single reference from the last job', 'was described by a referee as hard to work with'],
    },
    {
      name: 'teamwork',
      keywords: ['teamwork', 'collaborat', 'get along', 'team player'],
      good: ['resolved a long conflict between two departments', 'pairs with juniors every week', 'set up the cross-team design review'],
      bad: ['took credit for a colleague\'s work', 'refused to share on-call duties', 'was rude to the panel\'s junior member'],
    },
  ],
};

const OFFICE: Scenario = {
  id: 'office',
  question: 'Which site should the company lease for its new office?',
  noun: 'site',
  options: ['Harbor Point', 'Elm Park', 'Riverside Works', 'Northgate', 'Old Mill Yard'],
  topics: [
    {
      name: 'rent',
      keywords: ['rent', 'lease', 'cost', 'price'],
      good: ['offers the first six months rent-free', 'has a rent fixed for ten years', 'includes heating and cleaning in the rent'],
      bad: ['raises its rent by twelve percent each year', 'requires a deposit of a full year', 'charges service fees on top of the rent'],
    },
    {
      name: 'transport',
      keywords: ['transport', 'commut', 'train', 'bus', 'parking', 'get there'],
      good: ['is a two-minute walk from the central station', 'has a protected bike park for two hundred bikes', 'is on three bus lines'],
      bad: ['loses its only bus line next spring', 'has no parking within a kilometre', 'floods the access road every winter'],
    },
    {
      name: 'space',
      keywords: ['space', 'room', 'size', 'floor', 'layout'],
      good: ['has room to double the headcount', 'has eight meeting rooms with glass walls', 'comes with a roof terrace for events'],
      bad: ['has ceilings too low for the server racks', 'fits only two thirds of the staff', 'has no room for a kitchen'],
    },
  ],
};

const VENDOR: Scenario = {
  id: 'vendor',
  question: 'Which software vendor should the department sign the support contract with?',
  noun: 'vendor',
  options: ['Nimbus Systems', 'Corvid Labs', 'Tessellate', 'Quillon', 'Brightpath'],
  topics: [
    {
      name: 'support',
      keywords: ['support', 'helpdesk', 'service', 'response time'],
      good: ['answers every ticket within an hour', 'assigns a named engineer to each client', 'offers support in twelve languages'],
      bad: ['closes tickets without fixing them', 'has no weekend support', 'took three weeks to fix an outage last year'],
    },
    {
      name: 'security',
      keywords: ['security', 'breach', 'audit', 'certif'],
      good: ['passed an independent security audit last month', 'encrypts all data at rest and in transit', 'runs a public bug bounty'],
      bad: ['had a data breach it did not disclose for months', 'stores passwords in plain text', 'failed its last certification audit'],
    },
    {
      name: 'pricing',
      keywords: ['pricing', 'price', 'cost', 'licen', 'budget'],
      good: ['caps price rises at two percent a year', 'includes training in the licence', 'charges nothing for extra seats'],
      bad: ['doubles the price after the first year', 'bills every add-on separately', 'charges for each support ticket'],
    },
  ],
};

const VENUE: Scenario = {
  id: 'venue',
  question: 'Which venue should host the annual research conference?',
  noun: 'venue',
  options: ['Grand Lakeside', 'Civic Hall', 'Summit Centre', 'Pier Forty', 'Maple Lodge'],
  topics: [
    {
      name: 'capacity',
      keywords: ['capacity', 'how many', 'seats', 'attendees', 'crowd'],
      good: ['seats nine hundred in its main hall', 'has six breakout rooms for parallel sessions', 'can add a marquee for the poster session'],
      bad: ['holds only four hundred people under fire rules', 'has a main hall split by pillars', 'has no room for parallel sessions'],
    },
    {
      name: 'catering',
      keywords: ['catering', 'food', 'lunch', 'coffee', 'meal'],
      good: ['has an award-winning in-house kitchen', 'serves vegan and halal meals as standard', 'offers free coffee all day'],
      bad: ['was fined for food hygiene last year', 'lets only one outside caterer in', 'stops serving lunch at one o\'clock'],
    },
    {
      name: 'accessibility',
      keywords: ['accessib', 'wheelchair', 'step-free', 'disab', 'hearing loop'],
      good: ['is step-free throughout with wide lifts', 'has hearing loops in every room', 'provides sign-language interpreters on request'],
      bad: ['has a stage reachable only by stairs', 'has one small lift for three floors', 'has no accessible toilets on the conference floor'],
    },
  ],
};

const PROPOSAL: Scenario = {
  id: 'proposal',
  question: 'Which research proposal should the board fund this year?',
  noun: 'proposal',
  options: ['Project Alder', 'Project Birch', 'Project Cedar', 'Project Dune', 'Project Ember'],
  topics: [
    {
      name: 'feasibility',
      keywords: ['feasib', 'realistic', 'timeline', 'risk', 'doable'],
      good: ['already has a working prototype', 'has a team that delivered a similar study', 'secured access to the partner hospital\'s data'],
      bad: ['depends on equipment that does not exist yet', 'lost its lead scientist last month', 'has a timeline its own pilot overran by a year'],
    },
    {
      name: 'impact',
      keywords: ['impact', 'benefit', 'outcome', 'who gains', 'value'],
      good: ['could cut diagnosis times in half', 'has letters of support from three ministries', 'would release all its data openly'],
      bad: ['addresses a problem a competitor solved last year', 'serves a market of a few hundred people', 'has results that no one could reuse'],
    },
    {
      name: 'budget',
      keywords: ['budget', 'cost', 'money', 'funding', 'spend'],
      good: ['comes in a third under the funding cap', 'has co-funding from an industry partner', 'returns unused money at each milestone'],
      bad: ['has a budget that omits staff costs', 'asks for twice the funding cap', 'spent its seed grant without a report'],
    },
  ],
};

/** The scenarios of each split (disjoint; see the module comment). */
export const SCENARIOS: Readonly<Record<Split, readonly Scenario[]>> = {
  train: [HIRE, OFFICE, VENDOR],
  heldout: [VENUE, PROPOSAL],
};

/** The participants' names of each split (disjoint). */
export const PARTICIPANT_NAMES: Readonly<Record<Split, readonly string[]>> = {
  train: ['Ana', 'Ben', 'Chloe', 'Dev', 'Emma', 'Femi', 'Gita', 'Hal', 'Iris', 'Jon', 'Kai', 'Lena', 'Milo', 'Nora', 'Owen', 'Pia'],
  heldout: ['Quinn', 'Rhea', 'Sami', 'Tove', 'Uma', 'Vic', 'Wren', 'Xena', 'Yuri', 'Zara'],
};

/** Whether `message` asks about `topic` (mentions one of its keywords). */
export function asksAbout(message: string, topic: Topic): boolean {
  const m = message.toLowerCase();
  return topic.keywords.some((k) => m.includes(k));
}
