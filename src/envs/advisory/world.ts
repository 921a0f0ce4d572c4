import type { Rng } from '../../core/rng.js';

/**
 * The travel market of one `gymflow/advisory-v0` task: the flights between the client's home city and the
 * destination on the days around the trip, and the destination's hotels and activities. `tasks.ts` draws a
 * world per task from the task's seed; the search tools (`actions.ts`) read it; the solver (`solver.ts`)
 * finds the best plan in it.
 */

/** A hotel amenity a client may insist on. */
export const AMENITIES = ['pet-friendly', 'breakfast included', 'free cancellation', 'pool', 'parking', 'gym'] as const;
/** A hotel amenity. */
export type Amenity = (typeof AMENITIES)[number];

/** A kind of activity a client may want at least one of. */
export const ACTIVITY_CATEGORIES = ['museum', 'food', 'outdoor', 'nightlife', 'history', 'family'] as const;
/** A kind of activity. */
export type ActivityCategory = (typeof ACTIVITY_CATEGORIES)[number];

/** A flight; its price is per person. */
export interface Flight {
  id: string;
  airline: string;
  from: string;
  to: string;
  /** `YYYY-MM-DD`. */
  date: string;
  /** `HH:MM`. */
  departs: string;
  /** Minutes after midnight of `date` (1,440 or more: the next day). */
  arrivesMinute: number;
  stops: number;
  price: number;
}

/** A hotel of the destination; its price is per night for one room that sleeps `maxGuests`. */
export interface Hotel {
  id: string;
  name: string;
  city: string;
  stars: number;
  /** Guest review score, 5.0-9.8. */
  score: number;
  pricePerNight: number;
  maxGuests: number;
  amenities: Amenity[];
  /** Nights (`YYYY-MM-DD`) it is fully booked. */
  soldOut: string[];
}

/** An activity of the destination; its price is per person. */
export interface Activity {
  id: string;
  name: string;
  city: string;
  category: ActivityCategory;
  /** Guest review score, 3.0-9.8. */
  score: number;
  price: number;
  hours: number;
}

/** The market of one task. */
export interface TripWorld {
  flights: Flight[];
  hotels: Hotel[];
  activities: Activity[];
}

/** Days since 1970-01-01 of a civil date (Howard Hinnant's `days_from_civil`; `Date` is slow, and this runs per check). */
function daysFromCivil(y: number, m: number, d: number): number {
  const yy = m <= 2 ? y - 1 : y;
  const era = Math.floor(yy / 400);
  const yoe = yy - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

/** The civil date of a day count (`civil_from_days`), as `YYYY-MM-DD`. */
function civilFromDays(z: number): string {
  const zz = z + 719468;
  const era = Math.floor(zz / 146097);
  const doe = zz - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  const y = yoe + era * 400 + (m <= 2 ? 1 : 0);
  return `${y}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`;
}

/** The date `days` after `date` (`YYYY-MM-DD`, proleptic Gregorian calendar). */
export function addDays(date: string, days: number): string {
  return civilFromDays(daysFromCivil(Number(date.slice(0, 4)), Number(date.slice(5, 7)), Number(date.slice(8, 10))) + days);
}

/** The number of days from `from` to `to` (`YYYY-MM-DD`). */
export function daysBetween(from: string, to: string): number {
  const n = (s: string): number => daysFromCivil(Number(s.slice(0, 4)), Number(s.slice(5, 7)), Number(s.slice(8, 10)));
  return n(to) - n(from);
}

/** The nights of a stay: `checkIn` and the `nights - 1` dates after it. */
export function stayNights(checkIn: string, nights: number): string[] {
  return Array.from({ length: nights }, (_, i) => addDays(checkIn, i));
}

/** `HH:MM` of a minute of the day (`(+1 day)` appended past midnight). */
export function clock(minute: number): string {
  const m = ((minute % 1440) + 1440) % 1440;
  const text = `${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`;
  return minute >= 1440 ? `${text} (+1 day)` : text;
}

/** The minute of `HH:MM` (1,440 more with `(+1 day)`, as {@link clock} writes it); NaN for any other text. */
export function minuteOf(hhmm: string): number {
  const m = /^(\d{2}):(\d{2})( \(\+1 day\))?$/.exec(hhmm.trim());
  if (!m) return Number.NaN;
  return Number(m[1]) * 60 + Number(m[2]) + (m[3] ? 1440 : 0);
}

/** Whether the hotel has a room for every night of the stay. */
export function hotelAvailable(hotel: Hotel, checkIn: string, nights: number): boolean {
  return hotel.soldOut.length === 0 || stayNights(checkIn, nights).every((n) => !hotel.soldOut.includes(n));
}

const AIRLINES = ['Aurora Air', 'Bluefin Airways', 'Cobalt Jet', 'Meridian', 'Everjet', 'Falcon Air', 'Northwind', 'Solstice Airlines'];
const HOTEL_FIRST = ['Harbor', 'Old Town', 'Grand', 'Garden', 'River', 'Cathedral', 'Station', 'Park', 'Market', 'Lantern', 'Maple', 'Crown', 'Bridge', 'Summit'];
const HOTEL_SECOND = ['Hotel', 'Inn', 'Suites', 'Residence', 'Lodge', 'House', 'Boutique Hotel', 'Apartments'];
const ACTIVITY_NAMES: Readonly<Record<ActivityCategory, readonly string[]>> = {
  museum: ['Art Museum pass', 'Modern Art Gallery tour', 'Science Museum visit', 'Design Museum entry', 'Photography Museum tour'],
  food: ['Street food tour', 'Cooking class', 'Wine tasting', 'Market tasting walk', 'Chef\'s table dinner'],
  outdoor: ['Coastal hike', 'Bike tour', 'Kayak trip', 'Sunset sailing', 'Botanical garden walk'],
  nightlife: ['Jazz club evening', 'Rooftop bar crawl', 'Live music night', 'Comedy show', 'Night market walk'],
  history: ['Old town walking tour', 'Castle visit', 'Historic quarter tour', 'Underground tunnels tour', 'Palace guided visit'],
  family: ['Aquarium visit', 'Zoo day', 'Puppet theatre show', 'Science playground', 'Boat ride for families'],
};

const round1 = (x: number): number => Math.round(x * 10) / 10;

/** Ids unique within a world: a prefix and a number of the given width. */
function idMaker(rng: Rng, prefix: string, width: number): () => string {
  const used = new Set<string>();
  return () => {
    for (;;) {
      const id = `${prefix}${String(rng.int(0, 10 ** width - 1)).padStart(width, '0')}`;
      if (!used.has(id)) {
        used.add(id);
        return id;
      }
    }
  };
}

/** What a world is drawn around: the route and the trip's dates. */
export interface WorldFrame {
  origin: string;
  destination: string;
  departDate: string;
  nights: number;
}

/** Flights per route and date. */
export const FLIGHTS_PER_DAY = 6;
/** Hotels and activities per destination. */
export const HOTELS_PER_CITY = 9;
export const ACTIVITIES_PER_CITY = 12;

/**
 * Draws the market around a trip: {@link FLIGHTS_PER_DAY} flights each way on the travel day and the days
 * either side of it, {@link HOTELS_PER_CITY} hotels (some booked out on a night of the stay) and
 * {@link ACTIVITIES_PER_CITY} activities.
 */
export function generateWorld(rng: Rng, frame: WorldFrame): TripWorld {
  const flightId = idMaker(rng, 'FL', 4);
  const base = rng.int(140, 520);
  const hours = rng.int(2, 9);
  const flights: Flight[] = [];
  const returnDate = addDays(frame.departDate, frame.nights);
  for (const [from, to, day] of [
    [frame.origin, frame.destination, frame.departDate],
    [frame.destination, frame.origin, returnDate],
  ] as const) {
    for (const offset of [-1, 0, 1]) {
      for (let i = 0; i < FLIGHTS_PER_DAY; i++) {
        const stops = rng.next() < 0.45 ? 0 : rng.next() < 0.7 ? 1 : 2;
        const departMinute = rng.int(6 * 4, 21 * 4) * 15;
        const duration = hours * 60 + stops * rng.int(60, 180) + rng.int(0, 5) * 15;
        const factor = (stops === 0 ? 1.3 : stops === 1 ? 1 : 0.85) * (0.75 + rng.next() * 0.6);
        flights.push({
          id: flightId(),
          airline: rng.pick(AIRLINES),
          from,
          to,
          date: addDays(day, offset),
          departs: clock(departMinute),
          arrivesMinute: departMinute + duration,
          stops,
          price: Math.round(base * factor),
        });
      }
    }
  }
  const hotelId = idMaker(rng, 'HT', 3);
  const names = rng.shuffle(HOTEL_FIRST.flatMap((a) => HOTEL_SECOND.map((b) => `${a} ${b}`)));
  const nights = stayNights(frame.departDate, frame.nights);
  const hotels: Hotel[] = Array.from({ length: HOTELS_PER_CITY }, (_, i) => {
    const stars = rng.int(2, 5);
    const score = Math.min(9.8, Math.max(5, round1(4.6 + stars * 0.6 + rng.next() * 2.6 - 0.6)));
    const amenities = AMENITIES.filter((a) => rng.next() < (a === 'pool' || a === 'gym' ? 0.15 + stars * 0.1 : 0.45));
    return {
      id: hotelId(),
      name: names[i] as string,
      city: frame.destination,
      stars,
      score,
      pricePerNight: Math.max(45, Math.round(20 + stars * 32 + (score - 6) * 28 + rng.int(-20, 45))),
      maxGuests: rng.int(2, 4),
      amenities,
      soldOut: rng.next() < 0.2 ? [rng.pick(nights)] : [],
    };
  });
  const activityId = idMaker(rng, 'AC', 3);
  const activities: Activity[] = [];
  const taken = new Set<string>();
  while (activities.length < ACTIVITIES_PER_CITY) {
    const category = rng.pick(ACTIVITY_CATEGORIES);
    const name = rng.pick(ACTIVITY_NAMES[category]);
    if (taken.has(name)) continue;
    taken.add(name);
    activities.push({
      id: activityId(),
      name,
      city: frame.destination,
      category,
      score: round1(3 + rng.next() * 6.8),
      price: rng.next() < 0.1 ? 0 : rng.int(2, 30) * 5,
      hours: rng.int(1, 6),
    });
  }
  return { flights, hotels, activities };
}
