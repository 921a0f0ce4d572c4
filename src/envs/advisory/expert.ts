import type { Action, TaskInfo } from '../../core/types.js';
import { ExpertFailed, ScriptedExpert, type Script } from '../shared/scripted-expert.js';
import type { Topic } from './client.js';
import { returnDate, type TripRequest } from './plan.js';
import { solveTrip } from './solver.js';
import { getAdvisoryTask } from './tasks.js';
import { RECOMMEND_TOOL } from './tools.js';
import { type Activity, type ActivityCategory, type Amenity, type Flight, type Hotel, minuteOf } from './world.js';

/**
 * The expert of `gymflow/advisory-v0`: a careful advisor. It knows the client's wishes from the task bank
 * (as the retail expert knows the customer's goals), but asks about each topic first, one question each, as
 * the brief says; searches the flights both ways, the hotels for the stay and the activities; runs the
 * solver (`solver.ts`) on what the searches returned; prices the plan with `price_plan`; pitches it to the
 * client and asks them to confirm; and recommends it. Its demonstrations show the conversation an agent has
 * to learn: ask, search, compare, recommend.
 */

const say = (content: string): Action => ({ tool: 'respond', params: { content } });

/** The expert's question about each topic. */
export const EXPERT_QUESTIONS: Readonly<Record<Topic, string>> = {
  origin: 'Which city will you be flying from?',
  dates: 'What date would you like to leave, and how many nights will you stay?',
  travellers: 'How many people are travelling, including you?',
  budget: 'What is your total budget for the whole trip?',
  hotel: 'Do you have any requirements for the hotel, such as a minimum number of stars or amenities?',
  flights: 'Any preferences for the flights, such as nonstop only or a latest arrival time?',
  activities: 'How many activities would you like, and is there a kind you want at least one of?',
};

function parse<T>(observation: string, what: string): T[] {
  if (!observation.startsWith('[')) throw new ExpertFailed(`advisory expert: expected ${what} as a JSON list, got: ${observation.slice(0, 200)}`);
  return JSON.parse(observation) as T[];
}

interface FlightRow {
  id: string;
  airline: string;
  from: string;
  to: string;
  date: string;
  departs: string;
  arrives: string;
  stops: number;
  price_per_person: number;
}
interface HotelRow {
  id: string;
  name: string;
  stars: number;
  score: number;
  price_per_night: number;
  max_guests: number;
  amenities: Amenity[];
  booked_out?: string[];
}
interface ActivityRow {
  id: string;
  name: string;
  category: ActivityCategory;
  score: number;
  price_per_person: number;
  hours: number;
}

const flight = (f: FlightRow): Flight => ({
  id: f.id,
  airline: f.airline,
  from: f.from,
  to: f.to,
  date: f.date,
  departs: f.departs,
  arrivesMinute: minuteOf(f.arrives),
  stops: f.stops,
  price: f.price_per_person,
});

function* solve(r: TripRequest): Script {
  for (const question of Object.values(EXPERT_QUESTIONS)) yield say(question);
  const out = parse<FlightRow>(yield { tool: 'search_flights', params: { origin: r.origin, destination: r.destination, date: r.departDate } }, 'outbound flights');
  const back = parse<FlightRow>(yield { tool: 'search_flights', params: { origin: r.destination, destination: r.origin, date: returnDate(r) } }, 'return flights');
  const hotelRows = parse<HotelRow>(yield { tool: 'search_hotels', params: { city: r.destination, check_in: r.departDate, nights: r.nights } }, 'hotels');
  const activityRows = parse<ActivityRow>(yield { tool: 'search_activities', params: { city: r.destination } }, 'activities');
  const hotels: Hotel[] = hotelRows.map((h) => ({ id: h.id, name: h.name, city: r.destination, stars: h.stars, score: h.score, pricePerNight: h.price_per_night, maxGuests: h.max_guests, amenities: h.amenities, soldOut: h.booked_out ?? [] }));
  const activities: Activity[] = activityRows.map((a) => ({ id: a.id, name: a.name, city: r.destination, category: a.category, score: a.score, price: a.price_per_person, hours: a.hours }));
  const best = solveTrip(r, { flights: [...out, ...back].map(flight), hotels, activities });
  if (!best) throw new ExpertFailed('advisory expert: no plan meets every wish within the budget');
  const { plan } = best;
  const priced = JSON.parse(
    yield { tool: 'price_plan', params: { outbound_flight: plan.outbound, return_flight: plan.return, hotel: plan.hotel, activities: plan.activities, travellers: r.travellers } },
  ) as { total: number; value: number };
  if (priced.total !== best.cost) throw new ExpertFailed(`advisory expert: price_plan says $${priced.total}, the solver $${best.cost}`);
  const hotel = hotels.find((h) => h.id === plan.hotel) as Hotel;
  const acts = plan.activities.map((id) => activities.find((a) => a.id === id) as Activity);
  yield say(
    `Here is my recommendation: outbound flight ${plan.outbound} on ${r.departDate}, return flight ${plan.return} on ${returnDate(r)}, ` +
      `${r.nights} nights at ${hotel.name} (${plan.hotel}, ${hotel.stars} stars, rated ${hotel.score}), and ${acts.map((a) => `${a.name} (${a.id})`).join(', ')}. ` +
      `It costs $${best.cost} in total, within your budget of $${r.budget}. Shall I send you this plan?`,
  );
  yield { tool: RECOMMEND_TOOL, params: { outbound_flight: plan.outbound, return_flight: plan.return, hotel: plan.hotel, activities: plan.activities } };
}

/** The expert agent for `gymflow/advisory-v0` (see the module comment). */
export class AdvisoryExpert extends ScriptedExpert {
  constructor() {
    // An unknown task id, or a plan that fails, makes the agent recommend nothing usable, giving up.
    super({ name: 'advisory-expert' }, { tool: RECOMMEND_TOOL, params: { outbound_flight: 'none', return_flight: 'none', hotel: 'none', activities: [] } });
  }

  /** The plan for the task. */
  protected start(task: TaskInfo): Script {
    return solve(getAdvisoryTask(task.id).request);
  }
}
