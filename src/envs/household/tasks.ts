import { Rng } from '../../core/rng.js';
import type { Split, TaskInfo } from '../../core/types.js';
import {
  describeHouse,
  generateHouse,
  OBJECT_KINDS,
  RECEPTACLE_KINDS,
  ROOM_TEMPLATES,
  type Appliance,
  type House,
  type ObjectType,
  type ReceptacleType,
  type RoomType,
} from './world.js';
import { indexedTaskBank } from '../shared/task-bank.js';

/**
 * The task bank of `gymflow/household-v0`: ALFWorld's six task types over generated houses. Task `i` of a
 * split is regenerated from its id alone (`household-train-00042`): its house comes from a seed of the
 * split's own stream, and its type is the `i mod 6`-th, so every type has the same share.
 *
 * The splits furnish their rooms from disjoint templates ({@link TEMPLATE_SPLIT}): every room of a
 * held-out house uses a template no training house uses, so held-out layouts and object placements never
 * occur in training (ALFWorld's "unseen" split).
 */

/** The domain profile these tasks belong to. */
export const HOUSEHOLD_DOMAIN = 'household';

/** ALFWorld's six task types. */
export const HOUSEHOLD_TASK_TYPES = [
  'pick_and_place',
  'look_at_obj_in_light',
  'pick_clean_then_place',
  'pick_heat_then_place',
  'pick_cool_then_place',
  'pick_two_obj_and_place',
] as const;

/** One of ALFWorld's task types. */
export type HouseholdTaskType = (typeof HOUSEHOLD_TASK_TYPES)[number];

/** Tasks per split (200 and 40 of each type). */
export const HOUSEHOLD_TASK_COUNTS: Readonly<Record<Split, number>> = { train: 1200, heldout: 240 };

/** Which room templates (indices into `ROOM_TEMPLATES[room]`) each split furnishes its rooms from. */
export const TEMPLATE_SPLIT: Readonly<Record<Split, readonly number[]>> = { train: [0, 1, 2, 3], heldout: [4, 5] };

/** What the agent must bring about. */
export interface HouseholdGoal {
  type: HouseholdTaskType;
  object: ObjectType;
  /** Where the object must end up (every type but `look_at_obj_in_light`). */
  receptacle?: ReceptacleType;
}

/** A task of the bank: its house and goal. */
export interface HouseholdTask {
  id: string;
  split: Split;
  /** The seed its house was generated from. */
  seed: number;
  house: House;
  goal: HouseholdGoal;
  /** The goal in ALFWorld's words: `put a clean mug in cabinet.` */
  goalText: string;
  /**
   * What the agent is told: the house's rooms and receptacles, then `Your task is to: …` (ALFWorld's
   * opening observation). Policies and exported datasets see the instruction, not the reset observation, so
   * the layout belongs here.
   */
  instruction: string;
}

// Disjoint seed streams: the split decides the high bits.
const STREAM_BASE: Readonly<Record<Split, number>> = { train: 0x40000000, heldout: 0x60000000 };
/** Seeds tried per task before giving up (a house may lack what a task type needs). */
const ATTEMPTS = 64;

/** The id of the `index`-th task of `split`. */
export function householdTaskId(split: Split, index: number): string {
  return bank.id(split, index);
}

/** The receptacle types whose appliance does something to an object the goal then checks. */
const APPLIANCE_OF: Partial<Record<HouseholdTaskType, Appliance>> = {
  pick_clean_then_place: 'clean',
  pick_heat_then_place: 'heat',
  pick_cool_then_place: 'cool',
};

function phrase(goal: HouseholdGoal, rng: Rng): string {
  const o = goal.object;
  const r = goal.receptacle ?? '';
  const options: Record<HouseholdTaskType, readonly string[]> = {
    pick_and_place: [`put a ${o} in ${r}.`, `put some ${o} on ${r}.`],
    look_at_obj_in_light: [`look at ${o} under the desklamp.`, `examine the ${o} with the desklamp.`],
    pick_clean_then_place: [`put a clean ${o} in ${r}.`, `clean some ${o} and put it in ${r}.`],
    pick_heat_then_place: [`put a hot ${o} in ${r}.`, `heat some ${o} and put it in ${r}.`],
    pick_cool_then_place: [`put a cool ${o} in ${r}.`, `cool some ${o} and put it in ${r}.`],
    pick_two_obj_and_place: [`put two ${o} in ${r}.`, `find two ${o} and put them in ${r}.`],
  };
  return rng.pick(options[goal.type]);
}

/** A feasible goal of `type` in `house`, or `undefined` when the house cannot host one. */
export function chooseGoal(house: House, type: HouseholdTaskType, rng: Rng): HouseholdGoal | undefined {
  const counts = new Map<ObjectType, number>();
  for (const o of house.objects) if (o.type !== 'desklamp') counts.set(o.type, (counts.get(o.type) ?? 0) + 1);
  const present = new Set<ReceptacleType>(house.receptacles.map((r) => r.type));
  const typeOf = new Map(house.receptacles.map((r) => [r.name, r.type]));
  const appliance = APPLIANCE_OF[type];
  if (appliance && !house.receptacles.some((r) => (RECEPTACLE_KINDS[r.type] as { appliance?: Appliance }).appliance === appliance)) return undefined;
  const candidates: HouseholdGoal[] = [];
  for (const [object, n] of [...counts].sort(([a], [b]) => a.localeCompare(b))) {
    const kind = OBJECT_KINDS[object];
    if (type === 'look_at_obj_in_light') {
      if (kind.examinable && house.objects.some((o) => o.type === 'desklamp')) candidates.push({ type, object });
      continue;
    }
    if (appliance && !(kind.affords as readonly Appliance[]).includes(appliance)) continue;
    if (type === 'pick_two_obj_and_place' && n < 2) continue;
    // The goal must not hold at the start: no object of the type already lies in a receptacle of the target type.
    const startTypes = new Set(house.objects.filter((o) => o.type === object).map((o) => typeOf.get(o.at)));
    for (const receptacle of kind.places) {
      if (!present.has(receptacle) || startTypes.has(receptacle)) continue;
      // After heating, cooling or cleaning, the object goes somewhere that is not an appliance of that kind.
      const ra = (RECEPTACLE_KINDS[receptacle] as { appliance?: Appliance }).appliance;
      if (appliance && ra !== undefined && (ra === appliance || appliance !== 'clean')) continue;
      candidates.push({ type, object, receptacle });
    }
  }
  return candidates.length === 0 ? undefined : rng.pick(candidates);
}

function generateTask(split: Split, index: number): HouseholdTask {
  const type = HOUSEHOLD_TASK_TYPES[index % HOUSEHOLD_TASK_TYPES.length] as HouseholdTaskType;
  const templates = TEMPLATE_SPLIT[split];
  const templateFor = (room: RoomType, rng: Rng): number => rng.pick(templates.filter((t) => t < ROOM_TEMPLATES[room].length));
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const seed = STREAM_BASE[split] + index * ATTEMPTS + attempt;
    const rng = new Rng(seed);
    const house = generateHouse(rng, templateFor);
    const goal = chooseGoal(house, type, rng);
    if (!goal) continue;
    const goalText = phrase(goal, rng);
    return { id: householdTaskId(split, index), split, seed, house, goal, goalText, instruction: `${describeHouse(house)}\n\nYour task is to: ${goalText}` };
  }
  throw new RangeError(`household: no house of ${split} task ${index} hosts a ${type} task after ${ATTEMPTS} seeds`);
}

const bank = indexedTaskBank('household', HOUSEHOLD_TASK_COUNTS, generateTask);

/** The task with this id. Throws a `TaskError` for an id that is malformed or out of range. */
export function getHouseholdTask(id: string): HouseholdTask {
  return bank.get(id);
}

/** Every task of a split (both splits when omitted), in index order; generated on first use. */
export function listHouseholdTasks(split?: Split): HouseholdTask[] {
  return bank.list(split);
}

/** The public description of a task: the instruction (rooms, receptacles, goal) and its type, never where objects are. */
export function householdTaskInfo(task: HouseholdTask): TaskInfo {
  return {
    id: task.id,
    domain: HOUSEHOLD_DOMAIN,
    instruction: task.instruction,
    split: task.split,
    metadata: { type: task.goal.type, rooms: task.house.rooms.map((r) => r.type) },
  };
}
