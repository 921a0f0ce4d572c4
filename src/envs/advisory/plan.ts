import { type Activity, type ActivityCategory, type Amenity, addDays, clock, type Flight, type Hotel, hotelAvailable, minuteOf } from './world.js';

/**
 * What a client wants and what an advisor recommends: the client's hard constraints ({@link TripRequest}),
 * a plan ({@link TripPlan}), what a plan costs and is worth, and the TravelPlanner-style checks of a plan
 * against the constraints ({@link checkPlan}).
 *
 * - **cost** = (outbound + return fare) × travellers + hotel price per night × nights + Σ activity price ×
 *   travellers (one room sleeps the party);
 * - **value** = nights × the hotel's review score + Σ the activities' review scores (the quality of the
 *   trip; flights carry no value, only cost).
 */

/** The client's hard constraints (all hidden until asked). */
export interface TripRequest {
  origin: string;
  destination: string;
  /** `YYYY-MM-DD`: the outbound flight's date and the first night. */
  departDate: string;
  nights: number;
  travellers: number;
  /** The most the whole trip may cost, in dollars. */
  budget: number;
  hotel: { minStars?: number; amenities: Amenity[] };
  flights: { nonstop: boolean; /** The outbound flight lands by this time (`HH:MM`, same day). */ arriveBy?: string };
  activities: { count: number; category?: ActivityCategory };
}

/** A recommendation: one flight each way, one hotel, the activities. */
export interface TripPlan {
  outbound: string;
  return: string;
  hotel: string;
  activities: string[];
}

/** One check of a plan against the client's constraints. */
export interface PlanCheck {
  name: string;
  ok: boolean;
  detail: string;
}

/** The options a plan is checked against, by id. */
export interface PlanOptions {
  flights: readonly Flight[];
  hotels: readonly Hotel[];
  activities: readonly Activity[];
}

/** The return flight's date. */
export const returnDate = (r: TripRequest): string => addDays(r.departDate, r.nights);

const round2 = (x: number): number => Math.round(x * 100) / 100;

/** The cost of a plan's parts (see the module comment). */
export function planCost(r: Pick<TripRequest, 'nights' | 'travellers'>, out: Flight, back: Flight, hotel: Hotel, acts: readonly Activity[]): number {
  return (out.price + back.price) * r.travellers + hotel.pricePerNight * r.nights + acts.reduce((s, a) => s + a.price, 0) * r.travellers;
}

/** The value of a plan's parts (see the module comment), to 2 decimals. */
export function planValue(nights: number, hotel: Hotel, acts: readonly Activity[]): number {
  return round2(nights * hotel.score + acts.reduce((s, a) => s + a.score, 0));
}

/** Whether a flight serves the leg: the route and date, and the client's flight preferences. */
export function flightFits(r: TripRequest, f: Flight, leg: 'outbound' | 'return'): boolean {
  const [from, to, date] = leg === 'outbound' ? [r.origin, r.destination, r.departDate] : [r.destination, r.origin, returnDate(r)];
  if (f.from !== from || f.to !== to || f.date !== date) return false;
  if (r.flights.nonstop && f.stops > 0) return false;
  if (leg === 'outbound' && r.flights.arriveBy !== undefined && f.arrivesMinute > minuteOf(r.flights.arriveBy)) return false;
  return true;
}

/** Whether a hotel suits the client: in the destination, free every night, sleeps the party, stars and amenities. */
export function hotelFits(r: TripRequest, h: Hotel): boolean {
  return (
    h.city === r.destination &&
    hotelAvailable(h, r.departDate, r.nights) &&
    h.maxGuests >= r.travellers &&
    h.stars >= (r.hotel.minStars ?? 0) &&
    r.hotel.amenities.every((a) => h.amenities.includes(a))
  );
}

/** What a plan comes to, when its ids all name options. */
export interface PricedPlan {
  cost: number;
  value: number;
}

/**
 * Checks a plan against the client's constraints, one named check per constraint (TravelPlanner's hard
 * constraints): `known_options` (every id names an option, no activity twice), `outbound_flight` and
 * `return_flight` (route and date), `nonstop` and `arrival_time` (when the client asked), `hotel` (in the
 * destination and free every night), `hotel_capacity`, `hotel_stars` and `hotel_amenities` (when asked),
 * `activity_count`, `activity_category` (when asked) and `budget`. A plan with unknown ids fails
 * `known_options` alone and is not priced.
 */
export function checkPlan(r: TripRequest, plan: TripPlan, options: PlanOptions): { checks: PlanCheck[]; priced?: PricedPlan } {
  const out = options.flights.find((f) => f.id === plan.outbound);
  const back = options.flights.find((f) => f.id === plan.return);
  const hotel = options.hotels.find((h) => h.id === plan.hotel);
  const acts = plan.activities.map((id) => options.activities.find((a) => a.id === id));
  const unknown = [
    ...(out ? [] : [plan.outbound]),
    ...(back ? [] : [plan.return]),
    ...(hotel ? [] : [plan.hotel]),
    ...plan.activities.filter((_, i) => acts[i] === undefined),
  ];
  const repeated = plan.activities.filter((id, i) => plan.activities.indexOf(id) !== i);
  if (!out || !back || !hotel || unknown.length > 0 || repeated.length > 0) {
    const detail = unknown.length > 0 ? `unknown ids: ${unknown.join(', ')}` : `activities repeated: ${repeated.join(', ')}`;
    return { checks: [{ name: 'known_options', ok: false, detail }] };
  }
  const activities = acts as Activity[];
  const checks: PlanCheck[] = [{ name: 'known_options', ok: true, detail: 'every id names an option' }];
  const add = (name: string, ok: boolean, detail: string): void => {
    checks.push({ name, ok, detail });
  };
  add('outbound_flight', out.from === r.origin && out.to === r.destination && out.date === r.departDate, `${out.id}: ${out.from} → ${out.to} on ${out.date}; needed ${r.origin} → ${r.destination} on ${r.departDate}`);
  add('return_flight', back.from === r.destination && back.to === r.origin && back.date === returnDate(r), `${back.id}: ${back.from} → ${back.to} on ${back.date}; needed ${r.destination} → ${r.origin} on ${returnDate(r)}`);
  if (r.flights.nonstop) add('nonstop', out.stops === 0 && back.stops === 0, `stops: ${out.stops} out, ${back.stops} back; nonstop needed`);
  if (r.flights.arriveBy !== undefined) add('arrival_time', out.arrivesMinute <= minuteOf(r.flights.arriveBy), `${out.id} lands at ${clock(out.arrivesMinute)}; by ${r.flights.arriveBy} needed`);
  add('hotel', hotel.city === r.destination && hotelAvailable(hotel, r.departDate, r.nights), `${hotel.id} in ${hotel.city}, booked out on ${hotel.soldOut.join(', ') || 'no night'}`);
  add('hotel_capacity', hotel.maxGuests >= r.travellers, `${hotel.id} sleeps ${hotel.maxGuests}; ${r.travellers} travelling`);
  if (r.hotel.minStars !== undefined) add('hotel_stars', hotel.stars >= r.hotel.minStars, `${hotel.id} has ${hotel.stars} stars; at least ${r.hotel.minStars} needed`);
  if (r.hotel.amenities.length > 0) {
    const missing = r.hotel.amenities.filter((a) => !hotel.amenities.includes(a));
    add('hotel_amenities', missing.length === 0, missing.length === 0 ? 'every amenity asked for' : `${hotel.id} lacks ${missing.join(', ')}`);
  }
  add('activity_count', activities.length === r.activities.count && activities.every((a) => a.city === r.destination), `${activities.length} activities in the destination; ${r.activities.count} wanted`);
  if (r.activities.category !== undefined) {
    const cat = r.activities.category;
    add('activity_category', activities.some((a) => a.category === cat), `at least one ${cat} activity needed`);
  }
  const cost = planCost(r, out, back, hotel, activities);
  add('budget', cost <= r.budget, `costs $${cost}; budget $${r.budget}`);
  return { checks, priced: { cost, value: planValue(r.nights, hotel, activities) } };
}
