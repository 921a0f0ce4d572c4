import { describe, expect, it } from 'vitest';
import { BEST, ht, OPTIONS, REQUEST } from './__fixtures__/lisbon.js';
import { checkPlan, type TripPlan, type TripRequest } from './plan.js';
import { combinations, solveTrip } from './solver.js';
import { getAdvisoryTask, listAdvisoryTasks } from './tasks.js';
import { addDays, clock, daysBetween, type Flight, hotelAvailable, minuteOf } from './world.js';

const failed = (plan: TripPlan, r: TripRequest = REQUEST): string[] => checkPlan(r, plan, OPTIONS).checks.filter((c) => !c.ok).map((c) => c.name);

describe('dates and times', () => {
  it('adds days across months, lists the nights of a stay and reads back what it writes', () => {
    expect(addDays('2026-05-30', 3)).toBe('2026-06-02');
    expect(addDays('2028-02-28', 1)).toBe('2028-02-29');
    expect(addDays('2026-12-30', 3)).toBe('2027-01-02');
    expect(addDays('2026-03-01', -1)).toBe('2026-02-28');
    expect(daysBetween('2026-12-30', '2027-01-02')).toBe(3);
    expect(clock(1500)).toBe('01:00 (+1 day)');
    expect(minuteOf(clock(1500))).toBe(1500);
    expect(minuteOf('18:05')).toBe(1085);
    expect(minuteOf('6pm')).toBeNaN();
    expect(hotelAvailable(ht('X', 8, 1, { soldOut: ['2026-06-02'] }), '2026-05-30', 3)).toBe(true);
    expect(hotelAvailable(ht('X', 8, 1, { soldOut: ['2026-06-01'] }), '2026-05-30', 3)).toBe(false);
  });
});

describe('checkPlan', () => {
  it('passes the best plan, pricing it: (200 + 180) × 2 + 150 × 3 + 50 × 2 = 1310, worth 3 × 8 + 9 = 33', () => {
    const { checks, priced } = checkPlan(REQUEST, BEST, OPTIONS);
    expect(checks.map((c) => c.name)).toEqual(['known_options', 'outbound_flight', 'return_flight', 'nonstop', 'arrival_time', 'hotel', 'hotel_capacity', 'hotel_stars', 'hotel_amenities', 'activity_count', 'activity_category', 'budget']);
    expect(checks.every((c) => c.ok)).toBe(true);
    expect(priced).toEqual({ cost: 1310, value: 33 });
  });

  it('fails each check alone', () => {
    expect(failed({ ...BEST, outbound: 'OUT-EARLY' })).toEqual(['outbound_flight']);
    expect(failed({ ...BEST, return: 'OUT' })).toEqual(['return_flight']);
    expect(failed({ ...BEST, outbound: 'OUT-CHEAP-STOP' })).toEqual(['nonstop']);
    expect(failed({ ...BEST, outbound: 'OUT-LATE' })).toEqual(['arrival_time']);
    expect(failed({ ...BEST, hotel: 'FULL' })).toEqual(['hotel']);
    expect(failed({ ...BEST, hotel: 'SMALL' })).toEqual(['hotel_capacity']);
    expect(failed({ ...BEST, hotel: 'TWO-STAR' })).toEqual(['hotel_stars']);
    expect(failed({ ...BEST, hotel: 'PLAIN' })).toEqual(['hotel_amenities']);
    expect(failed({ ...BEST, activities: ['FOOD', 'MUSEUM'] })).toEqual(['activity_count']);
    expect(failed({ ...BEST, activities: ['MUSEUM'] })).toEqual(['activity_category']);
    expect(failed({ ...BEST, hotel: 'GREAT' })).toEqual(['budget']);
    expect(checkPlan(REQUEST, { ...BEST, hotel: 'NOPE' }, OPTIONS)).toEqual({ checks: [{ name: 'known_options', ok: false, detail: 'unknown ids: NOPE' }] });
    expect(failed({ ...BEST, activities: ['FOOD', 'FOOD'] }, { ...REQUEST, activities: { count: 2 } })).toEqual(['known_options']);
  });

  it('checks only the wishes the client has', () => {
    const easy: TripRequest = { ...REQUEST, hotel: { amenities: [] }, flights: { nonstop: false }, activities: { count: 1 } };
    expect(failed({ ...BEST, outbound: 'OUT-CHEAP-STOP', hotel: 'PLAIN', activities: ['MUSEUM'] }, easy)).toEqual([]);
  });
});

describe('solveTrip', () => {
  it('finds the hand-worked optimum, and the best-rated plan when the budget is ignored', () => {
    expect(solveTrip(REQUEST, OPTIONS)).toEqual({ plan: BEST, cost: 1310, value: 33 });
    expect(solveTrip(REQUEST, OPTIONS, true)?.plan.hotel).toBe('GREAT');
    expect(solveTrip({ ...REQUEST, budget: 1000 }, OPTIONS)).toBeUndefined();
  });

  it('agrees with brute force over every plan of generated markets', () => {
    // A training task that wants one activity and a held-out one that wants two: 36 flight pairs × 9 hotels × 12 or 66 sets.
    const one = listAdvisoryTasks('train').find((t) => t.request.activities.count === 1);
    const two = listAdvisoryTasks('heldout').find((t) => t.request.activities.count === 2);
    for (const task of [one, two].map((t) => getAdvisoryTask(t?.id ?? ''))) {
      const r = task.request;
      const legs = (from: string, date: string): Flight[] => task.world.flights.filter((f) => f.from === from && f.date === date);
      let best = 0;
      for (const out of legs(r.origin, r.departDate)) {
        for (const back of legs(r.destination, addDays(r.departDate, r.nights))) {
          for (const hotel of task.world.hotels) {
            for (const set of combinations(task.world.activities, r.activities.count)) {
              const { checks, priced } = checkPlan(r, { outbound: out.id, return: back.id, hotel: hotel.id, activities: set.map((a) => a.id) }, task.world);
              if (checks.every((c) => c.ok) && priced && priced.value > best) best = priced.value;
            }
          }
        }
      }
      expect(best, task.id).toBe(task.best.value);
    }
  });

  it('gives every task a best plan that passes every check, within a budget that binds', () => {
    for (const task of listAdvisoryTasks()) {
      const { checks, priced } = checkPlan(task.request, task.best.plan, task.world);
      expect(checks.filter((c) => !c.ok), task.id).toEqual([]);
      expect(priced).toEqual({ cost: task.best.cost, value: task.best.value });
      expect((solveTrip(task.request, task.world, true)?.value ?? 0) > task.best.value, task.id).toBe(true);
    }
  });
});
