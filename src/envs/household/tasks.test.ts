import { describe, expect, it } from 'vitest';
import { TaskError } from '../../core/errors.js';
import { goalHolds } from './goal.js';
import { getHouseholdTask, HOUSEHOLD_TASK_COUNTS, HOUSEHOLD_TASK_TYPES, householdTaskInfo, listHouseholdTasks, TEMPLATE_SPLIT } from './tasks.js';
import { buildWorld, layoutSignature } from './world.js';

describe('household tasks', () => {
  it('has 1,200 training and 240 held-out tasks, every ALFWorld type in equal shares', () => {
    for (const split of ['train', 'heldout'] as const) {
      const tasks = listHouseholdTasks(split);
      expect(tasks).toHaveLength(HOUSEHOLD_TASK_COUNTS[split]);
      for (const type of HOUSEHOLD_TASK_TYPES) expect(tasks.filter((t) => t.goal.type === type)).toHaveLength(HOUSEHOLD_TASK_COUNTS[split] / 6);
      expect(new Set(tasks.map((t) => t.id)).size).toBe(tasks.length);
    }
    expect(listHouseholdTasks()).toHaveLength(1440);
  });

  it('gives held-out tasks layouts and placements that no training task has', () => {
    const train = listHouseholdTasks('train');
    const heldout = listHouseholdTasks('heldout');
    const layouts = new Set(train.map((t) => layoutSignature(t.house)));
    const placements = new Set(train.flatMap((t) => t.house.objects.map((o) => `${layoutSignature(t.house)}/${o.name}@${o.at}`)));
    for (const t of heldout) {
      expect(layouts.has(layoutSignature(t.house))).toBe(false);
      for (const o of t.house.objects) expect(placements.has(`${layoutSignature(t.house)}/${o.name}@${o.at}`)).toBe(false);
      for (const room of t.house.rooms) expect(TEMPLATE_SPLIT.heldout).toContain(room.template);
    }
    for (const t of train) for (const room of t.house.rooms) expect(TEMPLATE_SPLIT.train).toContain(room.template);
  });

  it('never starts with the goal already holding, and names what the goal needs in the house', () => {
    for (const t of listHouseholdTasks()) {
      expect(goalHolds(buildWorld(t.house), t.goal), t.id).toBe(false);
      const objects = t.house.objects.filter((o) => o.type === t.goal.object);
      expect(objects.length, t.id).toBeGreaterThanOrEqual(t.goal.type === 'pick_two_obj_and_place' ? 2 : 1);
      if (t.goal.receptacle) expect(t.house.receptacles.some((r) => r.type === t.goal.receptacle), t.id).toBe(true);
      expect(t.instruction).toContain(t.goal.object);
    }
  });

  it('regenerates a task from its id alone and refuses unknown ids', () => {
    const t = getHouseholdTask('household-heldout-00017');
    expect(t).toBe(getHouseholdTask('household-heldout-00017'));
    expect(t.goal.type).toBe(HOUSEHOLD_TASK_TYPES[17 % 6]);
    expect(() => getHouseholdTask('household-test-00001')).toThrow(TaskError);
    expect(() => getHouseholdTask('household-heldout-00240')).toThrow(/out of range: heldout has 240 tasks/);
  });

  it('describes a task without saying where anything is', () => {
    const t = getHouseholdTask('household-train-00003');
    const info = householdTaskInfo(t);
    expect(info).toMatchObject({ id: t.id, domain: 'household', split: 'train', instruction: t.instruction, metadata: { type: t.goal.type } });
    for (const o of t.house.objects) expect(JSON.stringify(info)).not.toContain(o.name);
  });
});
