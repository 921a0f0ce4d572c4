import { describe, expect, it } from 'vitest';
import { TaskError } from '../../core/errors.js';
import { runRetailTool } from './actions.js';
import { cloneDb, sameDb } from './database.js';
import { getRetailTask, listRetailTasks, NAME_POOLS, RETAIL_TASK_COUNTS, RETAIL_TASK_KINDS, retailTaskInfo } from './tasks.js';

describe('retail tasks', () => {
  it('has 450 training and 90 held-out tasks, every kind in equal shares, with variations', () => {
    for (const split of ['train', 'heldout'] as const) {
      const tasks = listRetailTasks(split);
      expect(tasks).toHaveLength(RETAIL_TASK_COUNTS[split]);
      for (const kind of RETAIL_TASK_KINDS) expect(tasks.filter((t) => t.kind === kind)).toHaveLength(RETAIL_TASK_COUNTS[split] / RETAIL_TASK_KINDS.length);
      expect(new Set(tasks.map((t) => t.id)).size).toBe(tasks.length);
      // Each variation occurs in a fair share of the split.
      const share = (f: (t: (typeof tasks)[number]) => boolean): number => tasks.filter(f).length / tasks.length;
      expect(share((t) => !t.knowsEmail)).toBeGreaterThan(0.2);
      expect(share((t) => t.goals.some((g) => !g.knowsOrderId))).toBeGreaterThan(0.1);
      expect(share((t) => t.goals.some((g) => g.initially !== undefined))).toBeGreaterThan(0.05);
      expect(share((t) => t.goals.some((g) => g.goal.kind === 'foreign'))).toBeGreaterThan(0.05);
      expect(share((t) => t.goals.length > 1 && t.goals[1]?.goal.kind === 'info')).toBeGreaterThan(0.05);
    }
  });

  it('gives held-out tasks customers, hence hidden instructions, that no training task has', () => {
    const train = listRetailTasks('train');
    const heldout = listRetailTasks('heldout');
    const hidden = new Set(train.map((t) => t.hidden));
    const names = new Set(train.flatMap((t) => Object.values(t.db.users).map((u) => u.name.first_name)));
    for (const t of heldout) {
      expect(hidden.has(t.hidden)).toBe(false);
      for (const u of Object.values(t.db.users)) expect(names.has(u.name.first_name)).toBe(false);
    }
    expect(NAME_POOLS.train.first.filter((n) => NAME_POOLS.heldout.first.includes(n))).toEqual([]);
    expect(new Set(heldout.map((t) => t.hidden)).size).toBe(heldout.length);
  });

  it("replays the gold calls to the gold state; every task changes the store, transfers or asks for information", () => {
    for (const t of listRetailTasks()) {
      const db = cloneDb(t.db);
      for (const a of t.gold) if (a.tool !== 'transfer_to_human_agents') runRetailTool(db, a);
      expect(sameDb(db, t.goldDb), t.id).toBe(true);
      expect(t.goldTransferred).toBe(t.kind === 'transfer');
      expect(!sameDb(t.db, t.goldDb) || t.goldTransferred || t.outputs.length > 0, t.id).toBe(true);
      if (t.kind === 'info') expect(t.outputs.length, t.id).toBeGreaterThan(0);
      expect(t.instruction.endsWith(`\n\n${t.opening}`)).toBe(true);
    }
  });

  it('regenerates a task from its id alone and refuses unknown ids', () => {
    const t = getRetailTask('retail-heldout-00017');
    expect(t).toBe(getRetailTask('retail-heldout-00017'));
    expect(t.kind).toBe(RETAIL_TASK_KINDS[17 % 9]);
    expect(() => getRetailTask('retail-test-00001')).toThrow(TaskError);
    expect(() => getRetailTask('retail-heldout-00090')).toThrow(/out of range: heldout has 90 tasks/);
  });

  it('tells the agent the policy and the first message, never who the customer is or what exactly they want', () => {
    for (const t of listRetailTasks('heldout').slice(0, 30)) {
      const info = retailTaskInfo(t);
      expect(info).toMatchObject({ id: t.id, domain: 'conversation', split: 'heldout', metadata: { kind: t.kind } });
      const u = t.db.users[t.userId];
      const text = JSON.stringify(info);
      for (const secret of [u?.email, u?.user_id, u?.address.zip, ...Object.keys(t.db.orders), ...t.outputs]) expect(text).not.toContain(secret);
    }
  });
});
