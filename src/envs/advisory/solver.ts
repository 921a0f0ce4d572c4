import { flightFits, hotelFits, type PlanOptions, planCost, planValue, type TripPlan, type TripRequest } from './plan.js';
import type { Activity, Flight } from './world.js';

/**
 * The best plan under a client's constraints: the highest value (`plan.ts`) whose every check passes.
 * Flights carry no value, so the cheapest fitting flight each way is part of some best plan; the solver then
 * tries every fitting hotel with every set of the wanted number of activities (at most C(12, 3) = 220 per
 * hotel) and keeps the most valuable one within the budget (ties: the cheaper, then the smaller ids).
 * The task bank computes each task's optimum with it; the expert runs it on what its searches returned.
 */

/** The best plan with its cost and value. */
export interface SolvedPlan {
  plan: TripPlan;
  cost: number;
  value: number;
}

/** The sets of `k` items of `items`, in index order. */
export function combinations<T>(items: readonly T[], k: number): T[][] {
  if (k === 0) return [[]];
  const out: T[][] = [];
  items.forEach((item, i) => {
    for (const rest of combinations(items.slice(i + 1), k - 1)) out.push([item, ...rest]);
  });
  return out;
}

function cheapest(flights: readonly Flight[]): Flight | undefined {
  let best: Flight | undefined;
  for (const f of flights) if (!best || f.price < best.price || (f.price === best.price && f.id < best.id)) best = f;
  return best;
}

/** The best plan (see the module comment), or undefined when no plan meets every constraint. */
export function solveTrip(r: TripRequest, options: PlanOptions, ignoreBudget = false): SolvedPlan | undefined {
  const out = cheapest(options.flights.filter((f) => flightFits(r, f, 'outbound')));
  const back = cheapest(options.flights.filter((f) => flightFits(r, f, 'return')));
  if (!out || !back) return undefined;
  const hotels = options.hotels.filter((h) => hotelFits(r, h));
  const sets = combinations(options.activities.filter((a) => a.city === r.destination), r.activities.count).filter(
    (set) => r.activities.category === undefined || set.some((a) => a.category === r.activities.category),
  );
  let best: SolvedPlan | undefined;
  const key = (p: TripPlan): string => `${p.hotel} ${p.activities.join(' ')}`;
  for (const hotel of hotels) {
    for (const set of sets) {
      const cost = planCost(r, out, back, hotel, set);
      if (!ignoreBudget && cost > r.budget) continue;
      const value = planValue(r.nights, hotel, set);
      const plan: TripPlan = { outbound: out.id, return: back.id, hotel: hotel.id, activities: set.map((a: Activity) => a.id) };
      if (!best || value > best.value || (value === best.value && (cost < best.cost || (cost === best.cost && key(plan) < key(best.plan))))) best = { plan, cost, value };
    }
  }
  return best;
}
