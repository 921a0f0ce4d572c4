import { Rng } from '../../core/rng.js';
import type { Split, TaskInfo } from '../../core/types.js';
import type { UserScript } from '../conversation-kit/scripted-user.js';
import { indexedTaskBank } from '../shared/task-bank.js';
import { buildClientScript, hiddenInstruction, openingMessage } from './client.js';
import { flightFits, hotelFits, type TripRequest } from './plan.js';
import { ADVISORY_POLICY } from './policy.js';
import { combinations, type SolvedPlan, solveTrip } from './solver.js';
import { ACTIVITY_CATEGORIES, type Activity, addDays, AMENITIES, generateWorld, type TripWorld } from './world.js';

/**
 * The task bank of `gymflow/advisory-v0`. Task `i` of a split is regenerated from its id alone
 * (`advisory-train-00042`): a seed of the split's own stream draws the client (name, home city, destination,
 * dates, party, hotel, flight and activity wishes), the market around the trip (`world.ts`) and then the
 * budget, set between the cheapest plan that meets every other wish and the most valuable one, so that the
 * budget binds: the best plan within it (`solver.ts`, stored as the task's optimum) is never simply the
 * best-rated one. A seed whose market has no plan for the wishes, or whose budget would not bind, is
 * skipped for the next.
 *
 * The splits draw destinations and client names from disjoint lists, so no held-out hidden instruction,
 * market or opening occurs in training.
 */

/** The domain profile these tasks belong to. */
export const ADVISORY_DOMAIN = 'advisory';

/** Tasks per split. */
export const ADVISORY_TASK_COUNTS: Readonly<Record<Split, number>> = { train: 300, heldout: 60 };

/** Each split's destinations and client first names (disjoint), and what they share. */
export const ADVISORY_POOLS: Readonly<Record<Split, { destinations: readonly string[]; first: readonly string[] }>> = {
  train: {
    destinations: ['Lisbon', 'Barcelona', 'Prague', 'Vienna', 'Copenhagen', 'Dublin', 'Edinburgh', 'Budapest', 'Porto', 'Amsterdam', 'Berlin', 'Rome'],
    first: ['Aisha', 'Amelia', 'Andre', 'Arjun', 'Beatriz', 'Caleb', 'Chen', 'Daniel', 'Elena', 'Emeka', 'Farah', 'Felix', 'Grace', 'Hana', 'Hugo', 'Ines', 'Jonas', 'Julia', 'Kenji', 'Laila'],
  },
  heldout: {
    destinations: ['Kyoto', 'Seoul', 'Hanoi', 'Marrakesh', 'Cape Town', 'Reykjavik'],
    first: ['Abigail', 'Bruno', 'Clara', 'Dario', 'Esther', 'Gideon', 'Helga', 'Imani', 'Joaquin', 'Kaia'],
  },
};
const ORIGINS = ['Boston', 'Chicago', 'Denver', 'Seattle', 'Toronto', 'Atlanta', 'Miami', 'New York', 'San Francisco', 'Austin'];
const LAST = ['Garcia', 'Nguyen', 'Patel', 'Kim', 'Okafor', 'Silva', 'Novak', 'Cohen', 'Rossi', 'Tanaka', 'Muller', 'Haddad'];

const STREAM_BASE: Readonly<Record<Split, number>> = { train: 0x31000000, heldout: 0x3a000000 };
const ATTEMPTS = 64;

/** A task of the bank. */
export interface AdvisoryTask {
  id: string;
  split: Split;
  seed: number;
  /** The client's name. */
  client: string;
  /** The client's hard constraints. */
  request: TripRequest;
  /** The market. */
  world: TripWorld;
  /** The best plan under the constraints (the reward's yardstick). */
  best: SolvedPlan;
  /** The client's first message. */
  opening: string;
  /** The hidden instruction (a model user's prompt). */
  hidden: string;
  /** The same, as the scripted user follows it. */
  script: UserScript;
  /** What the agent is told: the brief and the client's first message. */
  instruction: string;
}

/** The cheapest cost of a plan meeting every wish but the budget, or undefined when there is none. */
function cheapestCost(r: TripRequest, world: TripWorld): number | undefined {
  const fare = (leg: 'outbound' | 'return'): number => Math.min(...world.flights.filter((f) => flightFits(r, f, leg)).map((f) => f.price));
  const hotel = Math.min(...world.hotels.filter((h) => hotelFits(r, h)).map((h) => h.pricePerNight));
  const sets = combinations(world.activities, r.activities.count).filter((s: Activity[]) => r.activities.category === undefined || s.some((a) => a.category === r.activities.category));
  const acts = Math.min(...sets.map((s) => s.reduce((t, a) => t + a.price, 0)));
  const cost = (fare('outbound') + fare('return') + acts) * r.travellers + hotel * r.nights;
  return Number.isFinite(cost) ? cost : undefined;
}

function draw(split: Split, index: number, seed: number): AdvisoryTask | undefined {
  const rng = new Rng(seed);
  const pools = ADVISORY_POOLS[split];
  const client = `${rng.pick(pools.first)} ${rng.pick(LAST)}`;
  const destination = rng.pick(pools.destinations);
  const origin = rng.pick(ORIGINS);
  const departDate = addDays('2026-03-02', rng.int(0, 240));
  const nights = rng.int(2, 5);
  const travellers = rng.pick([1, 2, 2, 2, 3, 4]);
  const world = generateWorld(rng, { origin, destination, departDate, nights });
  const amenityCount = rng.pick([0, 0, 1, 1, 1, 2]);
  const request: TripRequest = {
    origin,
    destination,
    departDate,
    nights,
    travellers,
    budget: Number.POSITIVE_INFINITY,
    hotel: { ...(rng.next() < 0.45 ? { minStars: rng.int(3, 4) } : {}), amenities: rng.shuffle(AMENITIES).slice(0, amenityCount).sort() },
    flights: { nonstop: rng.next() < 0.4, ...(rng.next() < 0.3 ? { arriveBy: rng.pick(['14:00', '16:00', '18:00', '20:00']) } : {}) },
    activities: { count: rng.int(1, 3), ...(rng.next() < 0.6 ? { category: rng.pick(ACTIVITY_CATEGORIES) } : {}) },
  };
  const top = solveTrip(request, world, true);
  const min = cheapestCost(request, world);
  if (!top || min === undefined || top.cost - min < 150) return undefined;
  let budget = Math.round((min + (0.3 + rng.next() * 0.45) * (top.cost - min)) / 50) * 50;
  if (budget < min) budget += 50;
  request.budget = budget;
  const best = solveTrip(request, world);
  if (!best || best.value >= top.value) return undefined;
  const opening = openingMessage(request, rng);
  return {
    id: bank.id(split, index),
    split,
    seed,
    client,
    request,
    world,
    best,
    opening,
    hidden: hiddenInstruction(client, request),
    script: buildClientScript(request),
    instruction: `${ADVISORY_POLICY}\n\n# The client's first message\n\n${opening}`,
  };
}

function generateTask(split: Split, index: number): AdvisoryTask {
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const task = draw(split, index, STREAM_BASE[split] + index * ATTEMPTS + attempt);
    if (task) return task;
  }
  throw new RangeError(`advisory: no seed of ${split} task ${index} gives a feasible trip with a binding budget after ${ATTEMPTS} tries`);
}

const bank = indexedTaskBank('advisory', ADVISORY_TASK_COUNTS, generateTask);

/** The id of the `index`-th task of `split`. */
export function advisoryTaskId(split: Split, index: number): string {
  return bank.id(split, index);
}

/** The task with this id. Throws a `TaskError` for an id that is malformed or out of range. */
export function getAdvisoryTask(id: string): AdvisoryTask {
  return bank.get(id);
}

/** Every task of a split (both splits when omitted), in index order; generated on first use. */
export function listAdvisoryTasks(split?: Split): AdvisoryTask[] {
  return bank.list(split);
}

/** The public description of a task: the brief and the client's first message; never the client's wishes. */
export function advisoryTaskInfo(task: AdvisoryTask): TaskInfo {
  return { id: task.id, domain: ADVISORY_DOMAIN, instruction: task.instruction, split: task.split, metadata: { destination: task.request.destination } };
}
