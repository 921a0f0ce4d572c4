import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../core/errors.js';
import type { Action, TaskInfo, TimeStep } from '../../core/types.js';
import { make } from '../../core/registry.js';
import { registerBuiltinEnvs } from '../register.js';
import { HOUSEHOLD_ENV_ID, HouseholdEnv } from './env.js';
import { planTask } from './planner.js';
import { listHouseholdTasks, type HouseholdTask } from './tasks.js';
import { RECEPTACLE_KINDS } from './world.js';

async function play(env: HouseholdEnv, reset: { seed?: number; task?: string }, actions: readonly Action[]): Promise<TimeStep[]> {
  const out = [await env.reset(reset)];
  for (const action of actions) out.push(await env.step(action));
  return out;
}

const go = (target: string): Action => ({ tool: 'go', params: { target } });
const openable = (type: string): boolean => RECEPTACLE_KINDS[type as keyof typeof RECEPTACLE_KINDS].openable;

/** A task whose house has a closed receptacle holding an object, and one in the open holding an object. */
function sceneTask(): { task: HouseholdTask; closed: string; hidden: string; openR: string; visible: string } {
  for (const task of listHouseholdTasks('heldout')) {
    const typeOf = new Map(task.house.receptacles.map((r) => [r.name, r.type]));
    const hidden = task.house.objects.find((o) => o.type !== 'desklamp' && openable(typeOf.get(o.at) as string));
    const visible = task.house.objects.find((o) => o.type !== 'desklamp' && !openable(typeOf.get(o.at) as string) && o.at !== hidden?.at);
    if (hidden && visible) return { task, closed: hidden.at, hidden: hidden.name, openR: visible.at, visible: visible.name };
  }
  throw new Error('no suitable task');
}

/** A clean-then-place task whose object can also be heated. */
function cleanTask(): HouseholdTask {
  const task = listHouseholdTasks('heldout').find((t) => t.goal.type === 'pick_clean_then_place' && ['apple', 'mug', 'potato', 'tomato', 'plate', 'bowl', 'cup'].includes(t.goal.object));
  if (!task) throw new Error('no clean task');
  return task;
}

describe('HouseholdEnv', () => {
  it('starts in the middle of the house, naming rooms and receptacles, and reports the public task', async () => {
    const { task } = sceneTask();
    const ts = await new HouseholdEnv().reset({ task: task.id });
    expect(ts.observation).toMatch(/^You are in the middle of a house\. The kitchen has a /);
    expect(ts.observation).toContain(`${task.instruction}\n\nTools: go(target)`);
    expect(task.instruction.endsWith(`\n\nYour task is to: ${task.goalText}`)).toBe(true);
    expect(ts.info.task as TaskInfo).toMatchObject({ id: task.id, domain: 'household', split: 'heldout' });
    for (const o of task.house.objects) expect(ts.observation).not.toContain(o.name);
    expect(ts.info.admissible).toBeUndefined();
  });

  it('hides what a closed receptacle holds until it is opened', async () => {
    const { task, closed, hidden, openR, visible } = sceneTask();
    const env = new HouseholdEnv();
    const [, atOpen, atClosed, looked, take, opened, closedAgain] = await play(env, { task: task.id }, [
      go(openR),
      go(closed),
      { tool: 'look', params: {} },
      { tool: 'take', params: { object: hidden, from: closed } },
      { tool: 'open', params: { target: closed } },
      { tool: 'close', params: { target: closed } },
    ]);
    expect(atOpen?.observation).toMatch(new RegExp(`^You arrive at ${openR}\\. On the ${openR}, you see .*a ${visible}`));
    expect(atClosed?.observation).toBe(`You arrive at ${closed}. The ${closed} is closed.`);
    expect(looked?.observation).not.toContain(hidden);
    expect(take?.info.error).toMatchObject({ code: 'closed' });
    expect(opened?.observation).toMatch(new RegExp(`^You open the ${closed}\\. The ${closed} is open\\. In it, you see .*a ${hidden}`));
    expect(closedAgain?.observation).toBe(`You close the ${closed}.`);
  });

  it('answers every kind of invalid action with info.error and reward 0, changing nothing', async () => {
    const { task, closed, hidden, openR, visible } = sceneTask();
    const kitchenFridge = task.house.receptacles.find((r) => r.type === 'fridge')?.name as string;
    const lamp = task.house.objects.find((o) => o.type === 'desklamp');
    const env = new HouseholdEnv();
    await env.reset({ task: task.id });
    const expectError = async (action: Action, code: string): Promise<void> => {
      const ts = await env.step(action);
      expect(ts, `${action.tool} ${JSON.stringify(action.params)}`).toMatchObject({ reward: 0, terminated: false, truncated: false, info: { error: { code } } });
      if (code !== 'unknown_tool' && code !== 'invalid_params') expect(ts.observation).toMatch(/^Nothing happens: /);
    };
    await expectError({ tool: 'fly', params: {} }, 'unknown_tool');
    await expectError({ tool: 'take', params: { object: 'apple 1' } }, 'invalid_params');
    await expectError(go('spaceship 9'), 'unknown_target');
    await expectError({ tool: 'open', params: { target: closed } }, 'not_here');
    await env.step(go(openR));
    await expectError({ tool: 'open', params: { target: openR } }, 'not_openable');
    await expectError({ tool: 'take', params: { object: 'spaceship 9', from: openR } }, 'not_found');
    await expectError({ tool: 'put', params: { object: visible, into: openR } }, 'not_holding');
    await expectError({ tool: 'examine', params: { target: hidden } }, 'not_here');
    await env.step({ tool: 'take', params: { object: visible, from: openR } });
    await expectError({ tool: 'clean', params: { object: visible, with: openR } }, 'wrong_appliance');
    await env.step(go(closed));
    await expectError({ tool: 'close', params: { target: closed } }, 'already_closed');
    await expectError({ tool: 'put', params: { object: visible, into: closed } }, 'closed');
    await env.step({ tool: 'open', params: { target: closed } });
    await expectError({ tool: 'open', params: { target: closed } }, 'already_open');
    await expectError({ tool: 'take', params: { object: hidden, from: closed } }, 'hands_full');
    await expectError({ tool: 'use', params: { object: hidden } }, 'cannot');
    if (lamp) await expectError({ tool: 'use', params: { object: lamp.name } }, lamp.at === closed ? 'cannot' : 'not_here');
    await env.step({ tool: 'put', params: { object: visible, into: closed } });
    await env.step({ tool: 'take', params: { object: hidden, from: closed } });
    await env.step(go(kitchenFridge));
    const book = { tool: 'heat', params: { object: hidden, with: kitchenFridge } };
    await expectError(book, 'wrong_appliance');
    const inv = await env.step({ tool: 'inventory', params: {} });
    expect(inv.observation).toBe(`You are carrying: a ${hidden}.`);
  });

  it('checks the object\'s state: a heated object that was not cleaned fails a clean task', async () => {
    const task = cleanTask();
    const plan = planTask(task);
    const cleanAt = plan.findIndex((a) => a.tool === 'clean');
    const object = String(plan[cleanAt]?.params.object);
    const microwave = task.house.receptacles.find((r) => r.type === 'microwave')?.name as string;
    // The plan with the sink swapped for the microwave: everything but cleanliness holds at the end.
    const wrong: Action[] = [...plan.slice(0, cleanAt - 1), go(microwave), { tool: 'heat', params: { object, with: microwave } }, ...plan.slice(cleanAt + 1)];
    const env = new HouseholdEnv();
    const steps = await play(env, { task: task.id }, wrong);
    const last = steps[steps.length - 1] as TimeStep;
    expect(last).toMatchObject({ reward: 0, terminated: false });
    expect(last.observation).toMatch(/^You put the /);
    const examined = await env.step({ tool: 'examine', params: { target: String(plan[plan.length - 1]?.params.into) } });
    expect(examined.info.error).toBeUndefined();
    // Fetch it back, clean it, put it there again: now the goal holds and the episode ends.
    const into = String(plan[plan.length - 1]?.params.into);
    const sink = String(plan[cleanAt]?.params.with);
    const fixed = await play(env, { task: task.id }, []);
    expect(fixed[0]?.observation).toContain(task.instruction);
    const rest = [...wrong, { tool: 'take', params: { object, from: into } }, { tool: 'examine', params: { target: object } }, go(sink), { tool: 'clean', params: { object, with: sink } }, go(into), { tool: 'put', params: { object, into } }];
    const out = [];
    for (const a of rest) out.push(await env.step(a));
    expect(out[wrong.length + 1]?.observation).toBe(`This is a hot ${object}.`);
    expect(out[out.length - 1]).toMatchObject({ reward: 1, terminated: true, truncated: false, info: { success: true, score: 1, reason: 'goal_reached' } });
  });

  it('cooling a hot object leaves it cool and no longer hot', async () => {
    const task = listHouseholdTasks('train').find((t) => t.goal.type === 'pick_heat_then_place' && t.goal.object === 'apple') as HouseholdTask;
    const plan = planTask(task);
    const heatAt = plan.findIndex((a) => a.tool === 'heat');
    const object = String(plan[heatAt]?.params.object);
    const fridge = task.house.receptacles.find((r) => r.type === 'fridge')?.name as string;
    const env = new HouseholdEnv();
    const out = await play(env, { task: task.id }, [...plan.slice(0, heatAt + 1), go(fridge), { tool: 'cool', params: { object, with: fridge } }, { tool: 'examine', params: { target: object } }, ...plan.slice(heatAt + 1)]);
    expect(out[heatAt + 4]?.observation).toBe(`This is a cool ${object}.`);
    expect(out[out.length - 1]).toMatchObject({ reward: 0, terminated: false });
  });

  it('ends with reason finished on finish, and success only when the goal holds', async () => {
    const env = new HouseholdEnv();
    const [, ts] = await play(env, { seed: 4 }, [{ tool: 'finish', params: {} }]);
    expect(ts).toMatchObject({ reward: 0, terminated: true, truncated: false, observation: 'You stop.', info: { success: false, score: 0, reason: 'finished' } });
  });

  it('is deterministic for the same seed, across instances', async () => {
    const actions: Action[] = [go('kitchen'), { tool: 'look', params: {} }, go('fridge 1'), { tool: 'open', params: { target: 'fridge 1' } }, go('cabinet 1'), { tool: 'inventory', params: {} }];
    const a = await play(new HouseholdEnv(), { seed: 11 }, actions);
    const b = await play(new HouseholdEnv(), { seed: 11 }, actions);
    expect(b).toEqual(a);
    const c = await play(new HouseholdEnv(), { seed: 12 }, actions);
    expect(c[0]?.observation).not.toBe(a[0]?.observation);
    expect((a[0]?.info.task as TaskInfo).split).toBe('train');
  });

  it('lists admissible actions when asked, and each of them steps without an error', async () => {
    const env = new HouseholdEnv({ admissibleActions: true });
    for (const task of listHouseholdTasks('heldout').slice(0, 30)) {
      let ts = await env.reset({ task: task.id });
      let i = 0;
      for (const action of planTask(task)) {
        const admissible = ts.info.admissible as Action[];
        expect(admissible).toContainEqual(action);
        // Try every admissible action but finish on a fresh copy of the state reached so far.
        if (i++ % 3 === 0) {
          for (const other of admissible.filter((a) => a.tool !== 'finish')) {
            const probe = new HouseholdEnv();
            await probe.reset({ task: task.id });
            for (const done of planTask(task).slice(0, i - 1)) await probe.step(done);
            expect((await probe.step(other)).info.error, `${task.id} ${JSON.stringify(other)}`).toBeUndefined();
          }
        }
        ts = await env.step(action);
      }
      expect(ts.info.success).toBe(true);
    }
  });

  it('validates its options and lists its tasks by split', () => {
    expect(() => new HouseholdEnv({ admissible: true })).toThrow(ConfigError);
    expect(() => new HouseholdEnv({ admissibleActions: 'yes' })).toThrow(/gymflow\/household-v0: invalid options/);
    registerBuiltinEnvs();
    const env = new HouseholdEnv();
    expect(env.listTasks('train')).toHaveLength(1200);
    expect(env.listTasks('heldout')).toHaveLength(240);
    // Counted without generating houses (what `gymflow envs` shows), the same through make()'s wrappers.
    const wrapped = make(HOUSEHOLD_ENV_ID);
    for (const split of ['train', 'heldout', undefined] as const) {
      expect(env.countTasks(split)).toBe(env.listTasks(split).length);
      expect(wrapped.countTasks?.(split)).toBe(env.listTasks(split).length);
    }
    expect(env.tools.map((t) => `${t.name}:${t.category}`)).toEqual([
      'go:execute', 'open:write', 'close:write', 'take:write', 'put:write', 'clean:write', 'heat:write', 'cool:write', 'use:execute', 'examine:read', 'inventory:read', 'look:read', 'finish:submit',
    ]);
  });
});
