import type { Action } from '../../core/types.js';
import { planCost, planValue } from './plan.js';
import { addDays, clock, daysBetween, hotelAvailable, stayNights, type TripWorld } from './world.js';

/**
 * The search tools of `gymflow/advisory-v0` over a task's {@link TripWorld}. Results are JSON (what a
 * travel API returns); nothing changes the world. A search that finds nothing says so in words, and a call
 * with ids that name nothing throws an {@link AdvisoryToolError} (the env reports it as `info.error`).
 */

/** A tool call the market cannot answer (an unknown id). */
export class AdvisoryToolError extends Error {
  /** `code`: reported in `info.error.code` (`unknown_option`, `bad_dates`). */
  constructor(readonly code: string, message: string) {
    super(message);
    this.name = 'AdvisoryToolError';
  }
}

const same = (a: string, b: string): boolean => a.trim().toLowerCase() === b.trim().toLowerCase();

/** Runs a search tool or `price_plan` (schema-valid params) and returns its observation. */
export function runAdvisoryTool(world: TripWorld, action: Action): string {
  const p = action.params;
  switch (action.tool) {
    case 'search_flights': {
      const found = world.flights.filter((f) => same(f.from, String(p.origin)) && same(f.to, String(p.destination)) && f.date === p.date);
      if (found.length === 0) return `No flights found from ${String(p.origin)} to ${String(p.destination)} on ${String(p.date)}.`;
      return JSON.stringify(
        found.map((f) => ({ id: f.id, airline: f.airline, from: f.from, to: f.to, date: f.date, departs: f.departs, arrives: clock(f.arrivesMinute), stops: f.stops, price_per_person: f.price })),
      );
    }
    case 'search_hotels': {
      const nights = Number(p.nights);
      const checkIn = String(p.check_in);
      const found = world.hotels.filter((h) => same(h.city, String(p.city)));
      if (found.length === 0) return `No hotels found in ${String(p.city)}.`;
      return JSON.stringify(
        found.map((h) => {
          const booked = stayNights(checkIn, nights).filter((n) => h.soldOut.includes(n));
          return {
            id: h.id,
            name: h.name,
            stars: h.stars,
            score: h.score,
            price_per_night: h.pricePerNight,
            max_guests: h.maxGuests,
            amenities: h.amenities,
            available: hotelAvailable(h, checkIn, nights),
            ...(booked.length > 0 ? { booked_out: booked } : {}),
          };
        }),
      );
    }
    case 'search_activities': {
      const found = world.activities.filter((a) => same(a.city, String(p.city)));
      if (found.length === 0) return `No activities found in ${String(p.city)}.`;
      return JSON.stringify(found.map((a) => ({ id: a.id, name: a.name, category: a.category, score: a.score, price_per_person: a.price, hours: a.hours })));
    }
    case 'price_plan': {
      const flight = (id: unknown) => world.flights.find((f) => f.id === id);
      const out = flight(p.outbound_flight);
      const back = flight(p.return_flight);
      const hotel = world.hotels.find((h) => h.id === p.hotel);
      const ids = (p.activities as string[]) ?? [];
      const acts = ids.map((id) => world.activities.find((a) => a.id === id));
      const unknown = [...(out ? [] : [p.outbound_flight]), ...(back ? [] : [p.return_flight]), ...(hotel ? [] : [p.hotel]), ...ids.filter((_, i) => !acts[i])].map(String);
      if (!out || !back || !hotel || unknown.length > 0) throw new AdvisoryToolError('unknown_option', `no such option: ${unknown.join(', ')}`);
      // Nights: from the outbound flight's date to the return flight's.
      const nights = daysBetween(out.date, back.date);
      if (nights < 1) throw new AdvisoryToolError('bad_dates', `the return flight (${back.date}) must leave after the outbound flight (${out.date})`);
      const travellers = Number(p.travellers);
      const list = acts as NonNullable<(typeof acts)[number]>[];
      const r = { nights, travellers };
      return JSON.stringify({
        nights,
        check_in: out.date,
        check_out: addDays(out.date, nights),
        flights: (out.price + back.price) * travellers,
        hotel: hotel.pricePerNight * nights,
        activities: list.reduce((s, a) => s + a.price, 0) * travellers,
        total: planCost(r, out, back, hotel, list),
        value: planValue(nights, hotel, list),
      });
    }
    default:
      throw new AdvisoryToolError('unknown_tool', `unknown tool '${action.tool}'`);
  }
}
