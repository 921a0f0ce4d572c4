import type { Action, TaskInfo } from '../../core/types.js';
import { ExpertFailed, ScriptedExpert, type Script } from '../shared/scripted-expert.js';
import { getHouseholdTask, type HouseholdGoal } from './tasks.js';
import { LAMP_PLACES, OBJECT_KINDS, RECEPTACLE_KINDS, type Appliance, type ReceptacleSpec, type ReceptacleType } from './world.js';

/**
 * The expert of `gymflow/household-v0`: it solves a task the way a careful person would, through the tools
 * and what they show. It knows what the instruction says — the goal, the rooms and their receptacles — and
 * where each kind of object may lie (an apple on a countertop, in the fridge or a cabinet; never in a bed),
 * not where the objects are: it searches the likely receptacles in the order the house lists them, opening
 * the closed ones, remembers everything it sees, then takes the object, uses the appliance the task needs
 * and puts it in the target (for light, it finds the desk lamp and turns it on while holding the object).
 * Its demonstrations therefore show the search an agent has to learn. The `planner` agent (`planner.ts`)
 * instead knows the placement and goes straight to it.
 */

const APPLIANCE_TASK: Readonly<Partial<Record<HouseholdGoal['type'], Appliance>>> = {
  pick_clean_then_place: 'clean',
  pick_heat_then_place: 'heat',
  pick_cool_then_place: 'cool',
};

/** The names listed after `you see` in an observation (`a apple 1, and a mug 2.` → apple 1, mug 2). */
export function parseSeen(observation: string): string[] {
  const at = observation.lastIndexOf('you see ');
  if (at < 0) return [];
  const end = observation.indexOf('.', at);
  const list = observation.slice(at + 8, end < 0 ? undefined : end);
  if (list === 'nothing') return [];
  const out: string[] = [];
  for (let item of list.split(', ')) {
    if (item.startsWith('and ')) item = item.slice(4);
    if (item.startsWith('a ')) out.push(item.slice(2));
  }
  return out;
}

/** The type of an object name (`apple 1` → `apple`). */
const typeOf = (name: string): string => name.slice(0, name.lastIndexOf(' '));

function* solve(goal: HouseholdGoal, receptacles: readonly ReceptacleSpec[]): Script {
  /** Where each object was last seen (receptacle name), and the receptacles already looked into. */
  const seen = new Map<string, string>();
  const searched = new Set<string>();
  const opened = new Set<string>();
  let at: string | undefined;
  const used = new Set<string>();
  const kindOf = (r: ReceptacleSpec): { openable: boolean; appliance?: Appliance } => RECEPTACLE_KINDS[r.type];
  const byName = new Map(receptacles.map((r) => [r.name, r]));

  function* goTo(name: string): Generator<Action, void, string> {
    if (at === name) return;
    const observation = yield { tool: 'go', params: { target: name } };
    at = name;
    const r = byName.get(name) as ReceptacleSpec;
    if (kindOf(r).openable && !opened.has(name)) {
      const inside = yield { tool: 'open', params: { target: name } };
      opened.add(name);
      record(name, inside);
    } else record(name, observation);
  }
  function record(name: string, observation: string): void {
    searched.add(name);
    for (const [obj, where] of seen) if (where === name) seen.delete(obj);
    for (const obj of parseSeen(observation)) seen.set(obj, name);
  }
  const found = (type: string): [string, string] | undefined => {
    for (const [obj, where] of seen) if (typeOf(obj) === type && !used.has(obj)) return [obj, where];
    return undefined;
  };
  /** Visits the receptacles where `type` may lie (then any other) until one holds a `type` not yet used. */
  function* find(type: string, places: readonly ReceptacleType[]): Generator<Action, [string, string], string> {
    const likely = receptacles.filter((r) => places.includes(r.type));
    const order = [...likely, ...receptacles.filter((r) => !places.includes(r.type))];
    for (const r of [undefined, ...order]) {
      if (r !== undefined) {
        if (searched.has(r.name)) continue;
        yield* goTo(r.name);
      }
      const hit = found(type);
      if (hit) return hit;
    }
    throw new ExpertFailed(`household expert: no ${type} anywhere in the house`);
  }
  function* fetch(): Generator<Action, string, string> {
    const [obj, where] = yield* find(goal.object, OBJECT_KINDS[goal.object].places);
    yield* goTo(where);
    yield { tool: 'take', params: { object: obj, from: where } };
    used.add(obj);
    seen.delete(obj);
    return obj;
  }

  if (goal.type === 'look_at_obj_in_light') {
    yield* fetch();
    const [lamp, where] = yield* find('desklamp', LAMP_PLACES);
    yield* goTo(where);
    yield { tool: 'use', params: { object: lamp } };
    return;
  }
  const target = receptacles.find((r) => r.type === goal.receptacle);
  if (!target) throw new ExpertFailed(`household expert: no ${goal.receptacle ?? 'target'} in the house`);
  const appliance = APPLIANCE_TASK[goal.type];
  const tool = appliance === undefined ? undefined : receptacles.find((r) => kindOf(r).appliance === appliance);
  for (let i = 0; i < (goal.type === 'pick_two_obj_and_place' ? 2 : 1); i++) {
    const obj = yield* fetch();
    if (appliance && tool) {
      yield* goTo(tool.name);
      yield { tool: appliance, params: { object: obj, with: tool.name } };
    }
    yield* goTo(target.name);
    yield { tool: 'put', params: { object: obj, into: target.name } };
    // What lies in the target now stays there.
    seen.delete(obj);
  }
}

/** The expert agent for `gymflow/household-v0` (see the module comment). */
export class HouseholdExpert extends ScriptedExpert {
  constructor() {
    super({ name: 'household-expert' }, { tool: 'finish', params: {} });
  }

  /** The search for the task's goal (an unknown task id makes the agent `finish`, giving up). */
  protected start(task: TaskInfo): Script {
    const t = getHouseholdTask(task.id);
    return solve(t.goal, t.house.receptacles);
  }
}
