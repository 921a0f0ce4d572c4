import { z } from 'zod';
import { BaseEnv } from '../../core/base-env.js';
import { ConfigError } from '../../core/errors.js';
import type { Action, ActionErrorInfo, Split, TaskInfo, TimeStep } from '../../core/types.js';
import { admissibleActions } from './admissible.js';
import { goalHolds } from './goal.js';
import { getHouseholdTask, HOUSEHOLD_DOMAIN, HOUSEHOLD_TASK_COUNTS, householdTaskId, householdTaskInfo, listHouseholdTasks, type HouseholdTask } from './tasks.js';
import { HOUSEHOLD_TOOLS } from './tools.js';
import { buildWorld, listThings, OBJECT_KINDS, ROOM_NAMES, type Appliance, type RoomType, type World, type WorldObject, type WorldReceptacle } from './world.js';

/** The registered id of this environment. */
export const HOUSEHOLD_ENV_ID = 'gymflow/household-v0';

/** Step limit applied by `make` (ALFWorld's 50). */
export const HOUSEHOLD_MAX_STEPS = 50;

/** Keyword arguments of the environment (validated at construction). */
export const HouseholdEnvOptionsSchema = z
  .object({
    /** List the actions that are valid now in every time step's `info.admissible` (as ALFWorld does). */
    admissibleActions: z.boolean().default(false),
  })
  .strict();

/** Options accepted by {@link HouseholdEnv}. */
export type HouseholdEnvOptions = z.input<typeof HouseholdEnvOptionsSchema>;

const TOOL_HINT =
  'Tools: go(target), open(target), close(target), take(object, from), put(object, into), clean/heat/cool(object, with), ' +
  'use(object), examine(target), inventory(), look(); finish() gives up. The episode ends by itself when the task is done.';

const SPACES = /\s+/g;
const norm = (text: unknown): string => String(text).trim().toLowerCase().replace(SPACES, ' ');

/** An invalid move inside the world: ALFWorld answers "Nothing happens."; we also say why. */
class Refusal {
  constructor(
    readonly code: string,
    readonly reason: string,
  ) {}
}

const APPLIANCE_TOOL: Readonly<Record<string, Appliance>> = { clean: 'clean', heat: 'heat', cool: 'cool' };

/**
 * `gymflow/household-v0`: a lite ALFWorld. A generated house of rooms with receptacles holding objects;
 * the six ALFWorld task types (`tasks.ts`); tools that are ALFWorld's commands (`tools.ts`).
 *
 * Reward (ALFWorld's `won`): **1** on the step after which the goal's conditions hold — the episode then
 * terminates with `success: true`, `score: 1`, reason `goal_reached`; every other step earns **0**.
 * `finish` ends the episode with reason `finished` and scores 1 only if the goal holds (it cannot, since the
 * goal ends the episode by itself: `finish` is giving up). The `MaxSteps` wrapper truncates at 50 steps
 * (reason `max_steps`, score 0). A move the world does not allow (an unknown name, a receptacle elsewhere or
 * closed, full hands, the wrong appliance) is an observation `Nothing happens: …` with `info.error`
 * (`unknown_target`, `not_here`, `closed`, `not_openable`, `already_open`, `already_closed`, `not_found`,
 * `hands_full`, `not_holding`, `wrong_appliance`, `cannot`), reward 0, and changes nothing.
 */
export class HouseholdEnv extends BaseEnv {
  readonly domain = HOUSEHOLD_DOMAIN;
  readonly tools = HOUSEHOLD_TOOLS;
  private readonly options: z.output<typeof HouseholdEnvOptionsSchema>;
  private task: HouseholdTask | undefined;
  private world: World | undefined;

  /** Throws a `ConfigError` when `options` fail {@link HouseholdEnvOptionsSchema}. */
  constructor(options: HouseholdEnvOptions | Record<string, unknown> = {}) {
    super();
    const parsed = HouseholdEnvOptionsSchema.safeParse(options);
    if (!parsed.success) {
      const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(options)'}: ${i.message}`).join('; ');
      throw new ConfigError(`${HOUSEHOLD_ENV_ID}: invalid options: ${issues}`);
    }
    this.options = parsed.data;
  }

  protected async onReset(options: { task?: string }): Promise<TimeStep> {
    // The same draw as `rng.pick(listHouseholdTasks('train'))`, without generating the whole split.
    const task = getHouseholdTask(options.task ?? householdTaskId('train', this.rng.int(0, HOUSEHOLD_TASK_COUNTS.train - 1)));
    this.task = task;
    const world = buildWorld(task.house);
    this.world = world;
    return this.first(`${task.instruction}\n\n${TOOL_HINT}`, householdTaskInfo(task), this.extraInfo());
  }

  protected async onStep(action: Action): Promise<TimeStep> {
    const task = this.task as HouseholdTask;
    const world = this.world as World;
    if (action.tool === 'finish') {
      const success = goalHolds(world, task.goal);
      return this.end('You stop.', success ? 1 : 0, { success, score: success ? 1 : 0, reason: 'finished' }, this.extraInfo());
    }
    let observation: string;
    try {
      observation = this.act(world, action);
    } catch (err) {
      if (!(err instanceof Refusal)) throw err;
      const error: ActionErrorInfo = { code: err.code, message: err.reason };
      return this.observe(`Nothing happens: ${err.reason}`, 0, { ...this.extraInfo(), error });
    }
    if (goalHolds(world, task.goal)) {
      return this.end(observation, 1, { success: true, score: 1, reason: 'goal_reached' }, this.extraInfo());
    }
    return this.observe(observation, 0, this.extraInfo());
  }

  /** The tasks of a split, or of both splits when omitted. */
  override listTasks(split?: Split): TaskInfo[] {
    return listHouseholdTasks(split).map(householdTaskInfo);
  }

  /** The number of tasks of a split (or both), without generating their houses. */
  override countTasks(split?: Split): number {
    return split ? HOUSEHOLD_TASK_COUNTS[split] : HOUSEHOLD_TASK_COUNTS.train + HOUSEHOLD_TASK_COUNTS.heldout;
  }

  private extraInfo(): Record<string, unknown> {
    return this.options.admissibleActions ? { admissible: admissibleActions(this.world as World) } : {};
  }

  private receptaclesIn(room: RoomType): string[] {
    const names: string[] = [];
    for (const r of (this.world as World).receptacles.values()) if (r.room === room) names.push(r.name);
    return names;
  }

  /** Carries out a schema-valid action and describes what happened; throws a {@link Refusal} for a move the world forbids. */
  private act(world: World, action: Action): string {
    const p = action.params;
    switch (action.tool) {
      case 'go':
        return this.go(world, norm(p.target));
      case 'open':
      case 'close': {
        const r = here(world, norm(p.target));
        if (!r.openable) throw new Refusal('not_openable', `the ${r.name} does not open or close.`);
        const opening = action.tool === 'open';
        if (r.open === opening) throw new Refusal(opening ? 'already_open' : 'already_closed', `the ${r.name} is already ${opening ? 'open' : 'closed'}.`);
        r.open = opening;
        return opening ? `You open the ${r.name}. ${describeInside(r)}` : `You close the ${r.name}.`;
      }
      case 'take': {
        const r = here(world, norm(p.from));
        const obj = visibleIn(r, norm(p.object));
        if (obj.type === 'desklamp') throw new Refusal('cannot', `the ${obj.name} is fixed in place; use it instead.`);
        if (world.held) throw new Refusal('hands_full', `you are already holding the ${world.held.name}; put it somewhere first.`);
        r.contents.splice(r.contents.indexOf(obj), 1);
        obj.at = undefined;
        world.held = obj;
        return `You pick up the ${obj.name} from the ${r.name}.`;
      }
      case 'put': {
        const obj = holding(world, norm(p.object));
        const r = here(world, norm(p.into));
        if (r.openable && !r.open) throw new Refusal('closed', `the ${r.name} is closed; open it first.`);
        r.contents.push(obj);
        obj.at = r.name;
        world.held = undefined;
        return `You put the ${obj.name} ${r.openable ? 'in' : 'on'} the ${r.name}.`;
      }
      case 'clean':
      case 'heat':
      case 'cool': {
        const appliance = APPLIANCE_TOOL[action.tool] as Appliance;
        const obj = holding(world, norm(p.object));
        const r = here(world, norm(p.with));
        if (r.appliance !== appliance) throw new Refusal('wrong_appliance', `you cannot ${appliance} anything with the ${r.name}.`);
        if (obj.type === 'desklamp' || !(OBJECT_KINDS[obj.type].affords as readonly Appliance[]).includes(appliance)) {
          throw new Refusal('cannot', `the ${obj.name} cannot be ${appliance === 'clean' ? 'cleaned' : appliance === 'heat' ? 'heated' : 'cooled'}.`);
        }
        if (appliance === 'clean') obj.clean = true;
        else if (appliance === 'heat') {
          obj.hot = true;
          obj.cool = false;
        } else {
          obj.cool = true;
          obj.hot = false;
        }
        return `You ${appliance} the ${obj.name} using the ${r.name}.`;
      }
      case 'use': {
        const name = norm(p.object);
        const lamp = world.objects.get(name);
        if (!lamp) throw new Refusal('unknown_target', `there is no ${name} in this house.`);
        if (lamp.type !== 'desklamp') throw new Refusal('cannot', `the ${lamp.name} is not something you can use.`);
        const loc = world.location;
        if (loc?.kind !== 'receptacle' || lamp.at !== loc.name) throw new Refusal('not_here', `the ${lamp.name} is not here; go to the ${lamp.at ?? 'receptacle it is on'} first.`);
        lamp.on = !lamp.on;
        return `You turn ${lamp.on ? 'on' : 'off'} the ${lamp.name}.`;
      }
      case 'examine':
        return this.examine(world, norm(p.target));
      case 'inventory':
        return world.held ? `You are carrying: a ${world.held.name}.` : 'You are not carrying anything.';
      default:
        // The validator lets only the declared tools through: this is `look`.
        return this.look(world);
    }
  }

  private go(world: World, target: string): string {
    const r = world.receptacles.get(target);
    if (r) {
      if (world.location?.kind === 'receptacle' && world.location.name === r.name) return `You are already at the ${r.name}. ${describeAt(r)}`;
      world.location = { kind: 'receptacle', name: r.name };
      return `You arrive at ${r.name}. ${describeAt(r)}`;
    }
    const room = world.rooms.find((x) => x === target || ROOM_NAMES[x] === target);
    if (room === undefined) throw new Refusal('unknown_target', `there is no ${target} in this house.`);
    world.location = { kind: 'room', room };
    return `You are in the ${ROOM_NAMES[room]}. Looking around, you see ${listThings(this.receptaclesIn(room))}.`;
  }

  private look(world: World): string {
    const loc = world.location;
    if (loc === undefined) return `You are in the middle of the house. The house has ${listThings(world.rooms.map((r) => ROOM_NAMES[r]))}.`;
    if (loc.kind === 'room') return `You are in the ${ROOM_NAMES[loc.room]}. Looking around, you see ${listThings(this.receptaclesIn(loc.room))}.`;
    const r = world.receptacles.get(loc.name) as WorldReceptacle;
    return `You are at ${r.name} in the ${ROOM_NAMES[r.room]}. ${describeAt(r)}`;
  }

  private examine(world: World, target: string): string {
    if (world.held?.name === target) return describeObject(world.held);
    const loc = world.location;
    const r = loc?.kind === 'receptacle' ? (world.receptacles.get(loc.name) as WorldReceptacle) : undefined;
    if (r?.name === target) return describeAt(r);
    const obj = r && (!r.openable || r.open) ? r.contents.find((o) => o.name === target) : undefined;
    if (obj) return describeObject(obj);
    if (!world.objects.has(target) && !world.receptacles.has(target)) throw new Refusal('unknown_target', `there is no ${target} in this house.`);
    throw new Refusal('not_here', `you do not see the ${target} here.`);
  }
}

/** The receptacle named, which must be where the agent stands. */
function here(world: World, name: string): WorldReceptacle {
  const r = world.receptacles.get(name);
  if (!r) throw new Refusal('unknown_target', `there is no receptacle called ${name} in this house.`);
  const loc = world.location;
  if (loc?.kind !== 'receptacle' || loc.name !== r.name) throw new Refusal('not_here', `you are not at the ${r.name}; go to it first.`);
  return r;
}

/** The object named, which must be visible in `r` (an openable receptacle must be open). */
function visibleIn(r: WorldReceptacle, name: string): WorldObject {
  if (r.openable && !r.open) throw new Refusal('closed', `the ${r.name} is closed; open it first.`);
  const obj = r.contents.find((o) => o.name === name);
  if (!obj) throw new Refusal('not_found', `you do not see a ${name} ${r.openable ? 'in' : 'on'} the ${r.name}.`);
  return obj;
}

/** The object named, which the agent must hold. */
function holding(world: World, name: string): WorldObject {
  const held = world.held;
  if (held?.name !== name) throw new Refusal('not_holding', held ? `you are holding the ${held.name}, not a ${name}.` : `you are not holding a ${name}.`);
  return held;
}

/** What the agent sees at a receptacle (ALFWorld: "On the countertop 1, you see a apple 1."). */
export function describeAt(r: WorldReceptacle): string {
  if (!r.openable) return `On the ${r.name}, you see ${listThings(r.contents.map((o) => o.name))}.`;
  return r.open ? describeInside(r) : `The ${r.name} is closed.`;
}

function describeInside(r: WorldReceptacle): string {
  return `The ${r.name} is open. In it, you see ${listThings(r.contents.map((o) => o.name))}.`;
}

/** An object's description: its state, or ALFWorld's "There's nothing special about …". */
export function describeObject(o: WorldObject): string {
  if (o.type === 'desklamp') return `The ${o.name} is ${o.on ? 'on' : 'off'}.`;
  const states = [o.clean ? 'clean' : '', o.hot ? 'hot' : '', o.cool ? 'cool' : ''].filter((s) => s !== '');
  return states.length === 0 ? `There's nothing special about ${o.name}.` : `This is a ${states.join(', ')} ${o.name}.`;
}
