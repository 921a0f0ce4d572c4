import type { PlanOptions, TripPlan, TripRequest } from '../plan.js';
import type { Flight, Hotel } from '../world.js';

/**
 * A hand-made market in Lisbon for the advisory tests and the worked example of `reward.ts`: every number is
 * chosen so that the checks and the optimum can be worked out by hand. Two travellers, 3 nights, $1,500.
 */
export const REQUEST: TripRequest = {
  origin: 'Boston',
  destination: 'Lisbon',
  departDate: '2026-05-30',
  nights: 3,
  travellers: 2,
  budget: 1500,
  hotel: { minStars: 3, amenities: ['breakfast included'] },
  flights: { nonstop: true, arriveBy: '18:00' },
  activities: { count: 1, category: 'food' },
};
export const fl = (id: string, from: string, to: string, date: string, price: number, stops = 0, arrivesMinute = 600): Flight => ({ id, airline: 'A', from, to, date, departs: '08:00', arrivesMinute, stops, price });
export const ht = (id: string, score: number, pricePerNight: number, extra: Partial<Hotel> = {}): Hotel => ({ id, name: id, city: 'Lisbon', stars: 4, score, pricePerNight, maxGuests: 2, amenities: ['breakfast included'], soldOut: [], ...extra });
export const OPTIONS: PlanOptions = {
  flights: [
    fl('OUT', 'Boston', 'Lisbon', '2026-05-30', 200),
    fl('OUT-CHEAP-STOP', 'Boston', 'Lisbon', '2026-05-30', 100, 1),
    fl('OUT-LATE', 'Boston', 'Lisbon', '2026-05-30', 150, 0, 1500),
    fl('OUT-EARLY', 'Boston', 'Lisbon', '2026-05-29', 120),
    fl('BACK', 'Lisbon', 'Boston', '2026-06-02', 180),
  ],
  hotels: [
    ht('GOOD', 8, 150),
    ht('GREAT', 9.5, 250),
    ht('FULL', 9.8, 100, { soldOut: ['2026-06-01'] }),
    ht('SMALL', 9.7, 100, { maxGuests: 1 }),
    ht('TWO-STAR', 9.6, 100, { stars: 2 }),
    ht('PLAIN', 9.4, 100, { amenities: [] }),
    ht('OK', 6.5, 120),
  ],
  activities: [
    { id: 'FOOD', name: 'Food tour', city: 'Lisbon', category: 'food', score: 9, price: 50, hours: 3 },
    { id: 'MUSEUM', name: 'Museum', city: 'Lisbon', category: 'museum', score: 9.9, price: 10, hours: 2 },
  ],
};
export const BEST: TripPlan = { outbound: 'OUT', return: 'BACK', hotel: 'GOOD', activities: ['FOOD'] };
