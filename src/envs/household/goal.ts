import type { HouseholdGoal } from './tasks.js';
import type { World, WorldObject } from './world.js';

/**
 * Whether a goal's conditions hold in a world (ALFWorld's goal conditions): an object of the goal's type —
 * clean, hot or cool as the type demands — in a receptacle of the goal's type; two of them in the same
 * receptacle; or, to examine an object in light, holding one at a receptacle whose desk lamp is on.
 */
export function goalHolds(world: World, goal: HouseholdGoal): boolean {
  if (goal.type === 'look_at_obj_in_light') {
    const loc = world.location;
    if (world.held?.type !== goal.object || loc?.kind !== 'receptacle') return false;
    const r = world.receptacles.get(loc.name);
    return r !== undefined && r.contents.some((o) => o.type === 'desklamp' && o.on);
  }
  const wanted = goal.type === 'pick_two_obj_and_place' ? 2 : 1;
  const ok = STATE_CHECK[goal.type];
  for (const r of world.receptacles.values()) {
    if (r.type !== goal.receptacle) continue;
    let n = 0;
    for (const o of r.contents) if (o.type === goal.object && ok(o)) n += 1;
    if (n >= wanted) return true;
  }
  return false;
}

const STATE_CHECK: Readonly<Record<HouseholdGoal['type'], (o: WorldObject) => boolean>> = {
  pick_and_place: () => true,
  look_at_obj_in_light: () => true,
  pick_clean_then_place: (o) => o.clean,
  pick_heat_then_place: (o) => o.hot,
  pick_cool_then_place: (o) => o.cool,
  pick_two_obj_and_place: () => true,
};
