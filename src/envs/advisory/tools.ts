import type { JsonSchema, ToolSpec } from '../../core/types.js';
import { RESPOND_TOOL } from '../conversation-kit/respond-tool.js';
import { strictTool, textParam } from '../shared/tool-spec.js';

/** The tools of `gymflow/advisory-v0`: `respond`, three searches, a price check, `think` and the terminal `recommend`. */

const DATE: JsonSchema = { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'A date, YYYY-MM-DD.' };
const IDS = (description: string): JsonSchema => ({ type: 'array', items: { type: 'string', minLength: 1 }, description });

/** The tool that ends the episode with the recommendation. */
export const RECOMMEND_TOOL = 'recommend';

/** The tools, in the order they are offered. */
export const ADVISORY_TOOLS: readonly ToolSpec[] = [
  RESPOND_TOOL,
  strictTool('search_flights', 'List the flights from one city to another on a date: id, airline, departure and arrival times, stops and the fare per person.', 'search', {
    origin: textParam('The departure city, e.g. "Boston".'),
    destination: textParam('The arrival city, e.g. "Lisbon".'),
    date: DATE,
  }),
  strictTool('search_hotels', "List a city's hotels for a stay: id, stars, review score, price per night (one room), how many guests a room sleeps, amenities, and whether it has a room every night of the stay.", 'search', {
    city: textParam('The city, e.g. "Lisbon".'),
    check_in: DATE,
    nights: { type: 'integer', minimum: 1, maximum: 30, description: 'The number of nights.' },
  }),
  strictTool('search_activities', "List a city's activities: id, name, category, review score, price per person and duration.", 'search', {
    city: textParam('The city, e.g. "Lisbon".'),
  }),
  strictTool('price_plan', "Price a candidate plan for a party: the total cost (fares and activities per person, the hotel per night) and its value (nights × the hotel's score + the activities' scores). Checks nothing about the client's wishes.", 'execute', {
    outbound_flight: textParam('The outbound flight id, e.g. "FL0421".'),
    return_flight: textParam('The return flight id.'),
    hotel: textParam('The hotel id, e.g. "HT042".'),
    activities: IDS('The activity ids, e.g. ["AC101", "AC007"].'),
    travellers: { type: 'integer', minimum: 1, maximum: 10, description: 'How many people travel.' },
  }),
  strictTool('think', 'Think about the next step; changes nothing and tells the client nothing.', 'think', { thought: textParam('The thought.') }),
  strictTool(RECOMMEND_TOOL, 'Recommend one trip to the client: a flight each way, a hotel and the activities. Ends the conversation; the recommendation is then scored.', 'submit', {
    outbound_flight: textParam('The outbound flight id.'),
    return_flight: textParam('The return flight id.'),
    hotel: textParam('The hotel id.'),
    activities: IDS('The activity ids.'),
  }),
];
