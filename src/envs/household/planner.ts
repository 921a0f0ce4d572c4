import type { Agent, AgentContext, AgentDecision } from '../../core/agent.js';
import { GymflowError } from '../../core/errors.js';
import type { Action, TaskInfo } from '../../core/types.js';
import type { AgentInfo } from '../../core/wrappers/recorder.js';
import { getHouseholdTask, type HouseholdTask } from './tasks.js';
import { RECEPTACLE_KINDS, type Appliance, type ReceptacleType } from './world.js';

const APPLIANCE_TASK: Readonly<Partial<Record<HouseholdTask['goal']['type'], Appliance>>> = {
  pick_clean_then_place: 'clean',
  pick_heat_then_place: 'heat',
  pick_cool_then_place: 'cool',
};

const kindOf = (type: ReceptacleType): { openable: boolean; appliance?: Appliance } => RECEPTACLE_KINDS[type];

/**
 * The plan of a task: the shortest sequence of tool calls this planner knows that reaches the goal from the
 * house's initial state. Like ALFWorld's expert (a planner over the game's state), it knows where every
 * object starts; it goes to the object (opening its receptacle when closed), takes it, visits the
 * appliance the task needs, then the target receptacle (opening it once), and puts it there — twice for
 * two objects; for examining in light it carries the object to the desk lamp and turns it on.
 */
export function planTask(task: HouseholdTask): Action[] {
  const { house, goal } = task;
  const typeOf = new Map(house.receptacles.map((r) => [r.name, r.type]));
  const plan: Action[] = [];
  let at: string | undefined;
  const opened = new Set<string>();
  const goTo = (name: string): void => {
    if (at !== name) plan.push({ tool: 'go', params: { target: name } });
    at = name;
  };
  const openHere = (name: string): void => {
    if (kindOf(typeOf.get(name) as ReceptacleType).openable && !opened.has(name)) {
      plan.push({ tool: 'open', params: { target: name } });
      opened.add(name);
    }
  };
  // Instances of the goal's type, those lying in the open first (fewer steps), then by name.
  const candidates = house.objects
    .filter((o) => o.type === goal.object)
    .sort((a, b) => Number(kindOf(typeOf.get(a.at) as ReceptacleType).openable) - Number(kindOf(typeOf.get(b.at) as ReceptacleType).openable) || a.name.localeCompare(b.name));
  const fetch = (index: number): string => {
    const obj = candidates[index];
    if (!obj) throw new GymflowError('EXPERT_FAILED', `household expert: ${task.id} has no ${goal.object} number ${index + 1}`);
    goTo(obj.at);
    openHere(obj.at);
    plan.push({ tool: 'take', params: { object: obj.name, from: obj.at } });
    return obj.name;
  };
  if (goal.type === 'look_at_obj_in_light') {
    const lamp = house.objects.find((o) => o.type === 'desklamp');
    if (!lamp) throw new GymflowError('EXPERT_FAILED', `household expert: ${task.id} has no desk lamp`);
    fetch(0);
    goTo(lamp.at);
    plan.push({ tool: 'use', params: { object: lamp.name } });
    return plan;
  }
  const target = house.receptacles.find((r) => r.type === goal.receptacle);
  if (!target) throw new GymflowError('EXPERT_FAILED', `household expert: ${task.id} has no ${goal.receptacle ?? 'target receptacle'}`);
  const appliance = APPLIANCE_TASK[goal.type];
  const tool = house.receptacles.find((r) => appliance !== undefined && kindOf(r.type).appliance === appliance);
  const count = goal.type === 'pick_two_obj_and_place' ? 2 : 1;
  for (let i = 0; i < count; i++) {
    const name = fetch(i);
    if (appliance && tool) {
      goTo(tool.name);
      plan.push({ tool: appliance, params: { object: name, with: tool.name } });
    }
    goTo(target.name);
    openHere(target.name);
    plan.push({ tool: 'put', params: { object: name, into: target.name } });
  }
  return plan;
}

/**
 * An agent for `gymflow/household-v0` that plays {@link planTask}'s plan: it knows where objects start, so it
 * never searches (registered as the `planner` agent; the `expert` searches, see `expert.ts`).
 */
export class HouseholdPlanner implements Agent {
  readonly info: AgentInfo = { name: 'household-planner' };
  private plan: Action[] | undefined;
  private taskId: string | undefined;

  /** Plans the task (a task id this expert does not know makes it `finish`, giving up). */
  reset(task: TaskInfo): void {
    this.taskId = task.id;
    try {
      this.plan = planTask(getHouseholdTask(task.id));
    } catch (err) {
      if (!(err instanceof GymflowError)) throw err;
      this.plan = undefined;
    }
  }

  /** The plan's next action (by step index), or `finish` once it has run out. */
  async act(ctx: AgentContext): Promise<AgentDecision> {
    // Callers that skip `reset` (or reuse the agent across tasks) still get the right plan; the plan is read by
    // step index, so replaying the same task needs no new one.
    if (this.taskId !== ctx.task.id) this.reset(ctx.task);
    const next = this.plan?.[ctx.stepIndex];
    return { action: next ?? { tool: 'finish', params: {} } };
  }
}
