import type { Rng } from '../../core/rng.js';
import { DEFAULT_PHRASES, type ScriptFact, type UserScript } from '../conversation-kit/scripted-user.js';
import { returnDate, type TripRequest } from './plan.js';

/**
 * The client in words: the scripted user's {@link UserScript} (one fact per topic, told only when the
 * advisor asks about it), the opening message and the hidden instruction a model user is prompted with.
 * Both users know the same things: the {@link TripRequest}, topic by topic.
 */

/** The topics an advisor must ask about, each with what a question about it contains. */
export const TOPICS = {
  origin: /\b(origin|home (city|airport)|(flying|fly|departing|depart|leaving|leave|travell?ing|coming|starting) from|where\b.{0,40}\bfrom\b)/i,
  dates: /\b(dates?|when|how many nights|how long|which day|what day)\b/i,
  travellers: /\b(how many (people|persons|travell?ers|guests|adults|of you)|travell?ers|party size|who is (coming|travell?ing)|travell?ing with|group size)\b/i,
  budget: /\b(budget|spend|price range|afford|how much)\b/i,
  hotel: /\b(hotels?|accommodation|lodging|amenit(y|ies)|stars?)\b/i,
  flights: /\b(flights?|airlines?|nonstop|non-stop|layovers?|stops|arriv(e|al))\b/i,
  activities: /\b(activit(y|ies)|things to do|tours?|sightseeing|interests?|excursions?)\b/i,
} as const;

/** A topic the advisor must ask about. */
export type Topic = keyof typeof TOPICS;

/** The topics, in the order the expert asks. */
export const TOPIC_NAMES = Object.keys(TOPICS) as Topic[];

const money = (n: number): string => `$${n.toLocaleString('en-US')}`;
const list = (items: readonly string[]): string => (items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} and ${items[items.length - 1] as string}`);

const CATEGORY_WORDS: Record<string, string> = {
  museum: 'museum',
  food: 'food',
  outdoor: 'outdoor',
  nightlife: 'nightlife',
  history: 'history',
  family: 'family',
};

/** What the client says about each topic (one or two phrasings each). */
export function topicAnswers(r: TripRequest): Record<Topic, string[]> {
  const party = r.travellers === 1 ? ['Just me, I travel alone.', "It's only me."] : [`There will be ${r.travellers} of us.`, `We are ${r.travellers} people.`];
  const hotelWants = [...(r.hotel.minStars !== undefined ? [`at least ${r.hotel.minStars} stars`] : []), ...r.hotel.amenities];
  const hotel = hotelWants.length === 0 ? ['Any hotel is fine, I have no special requirements.', 'No particular hotel requirements.'] : [`The hotel must have ${list(hotelWants)}.`, `For the hotel I need ${list(hotelWants)}.`];
  const flightWants = [...(r.flights.nonstop ? ['nonstop flights only'] : []), ...(r.flights.arriveBy !== undefined ? [`to land in ${r.destination} by ${r.flights.arriveBy}`] : [])];
  const flights = flightWants.length === 0 ? ['Any flights are fine.', 'I have no flight preferences.'] : [`I need ${list(flightWants)}.`, `Flights: ${list(flightWants)}, please.`];
  const count = r.activities.count === 1 ? 'one activity' : `${r.activities.count} activities`;
  const activities =
    r.activities.category === undefined
      ? [`I'd like ${count}, any kind.`, `Please plan ${count}; I have no preference.`]
      : [`I'd like ${count}, at least one of them a ${CATEGORY_WORDS[r.activities.category]} activity.`, `Please plan ${count}, including at least one ${CATEGORY_WORDS[r.activities.category]} activity.`];
  return {
    origin: [`I'm flying from ${r.origin}.`, `I'll be leaving from ${r.origin}.`],
    dates: [`I leave on ${r.departDate} and stay ${r.nights} nights, flying back on ${returnDate(r)}.`, `From ${r.departDate}, ${r.nights} nights; I fly home on ${returnDate(r)}.`],
    travellers: party,
    budget: [`My total budget is ${money(r.budget)} for everything: flights, hotel and activities.`, `I can spend at most ${money(r.budget)} in total.`],
    hotel,
    flights,
    activities,
  };
}

/** The client's first message: where to, and that it wants a recommendation. */
export function openingMessage(r: TripRequest, rng: Rng): string {
  return rng.pick([
    `Hi! I'm planning a trip to ${r.destination} and would love a recommendation.`,
    `Hello, could you help me plan a trip to ${r.destination}?`,
    `Hi, I need help putting together a trip to ${r.destination}.`,
  ]);
}

/** The scripted user of a task: every topic a fact; the goal ends only when the advisor recommends. */
export function buildClientScript(r: TripRequest): UserScript {
  const answers = topicAnswers(r);
  const facts: ScriptFact[] = TOPIC_NAMES.map((key) => ({ key, asked: TOPICS[key], answers: answers[key] }));
  return {
    facts,
    goals: [{ kind: 'handoff', id: 'recommendation', request: [`Could you recommend a trip to ${r.destination} for me?`, `What would you recommend for my trip to ${r.destination}?`] }],
    patience: 2,
    phrases: DEFAULT_PHRASES,
  };
}

/** The hidden instruction: who the client is and every constraint, in words (a model user's prompt). */
export function hiddenInstruction(name: string, r: TripRequest): string {
  const a = topicAnswers(r);
  return [
    `You are ${name}, planning a trip from ${r.origin} to ${r.destination} and asking a travel advisor for a recommendation.`,
    `Your wishes, which you reveal only when the advisor asks about that topic (never volunteer the others):`,
    `- where you fly from: ${a.origin[0]}`,
    `- dates: ${a.dates[0]}`,
    `- travellers: ${a.travellers[0]}`,
    `- budget: ${a.budget[0]}`,
    `- hotel: ${a.hotel[0]}`,
    `- flights: ${a.flights[0]}`,
    `- activities: ${a.activities[0]}`,
    'Do not choose flights, hotels or activities yourself; the advisor recommends. The advisor ends the conversation by submitting the recommendation; do not end it yourself unless the advisor is of no help at all.',
  ].join('\n');
}
