import { describe, expect, it } from 'vitest';
import { TaskError } from '../../core/errors.js';
import { FAULT_KINDS, HELDOUT_COMBINATIONS } from './fleet.js';
import { ENGINEERING_TASK_COUNTS, engineeringTaskInfo, getEngineeringTask, listEngineeringTasks } from './tasks.js';

describe('engineering tasks', () => {
  it('has 250 training and 60 held-out tasks, every fault kind in equal shares, over several services each', () => {
    for (const split of ['train', 'heldout'] as const) {
      const tasks = listEngineeringTasks(split);
      expect(tasks).toHaveLength(ENGINEERING_TASK_COUNTS[split]);
      expect(new Set(tasks.map((t) => t.id)).size).toBe(tasks.length);
      for (const kind of FAULT_KINDS) {
        const of = tasks.filter((t) => t.kind === kind);
        expect(of).toHaveLength(ENGINEERING_TASK_COUNTS[split] / FAULT_KINDS.length);
        expect(new Set(of.map((t) => t.incident.fault.service)).size, `${split} ${kind}`).toBeGreaterThan(split === 'heldout' && kind === 'connection_leak' ? 0 : 1);
      }
      for (const t of tasks) {
        const inc = t.incident;
        expect(inc.services.length, t.id).toBeGreaterThanOrEqual(7);
        expect(inc.services.map((s) => s.name)).toContain(inc.fault.service);
        expect(inc.reach[inc.symptom], t.id).toBeDefined();
        expect(inc.deploys.length + inc.configChanges.length, t.id).toBeGreaterThanOrEqual(3);
      }
      // Innocent changes close to the onset (red herrings) in a fair share of the tasks.
      const herring = tasks.filter((t) => [...t.incident.deploys, ...t.incident.configChanges].some((c) => c !== t.incident.fault.deploy && c !== t.incident.fault.change && Math.abs(c.at - t.incident.fault.onset) <= 10));
      expect(herring.length / tasks.length).toBeGreaterThan(0.8);
    }
  });

  it('holds out fault/service combinations, hence hidden instructions, that no training task has', () => {
    const train = listEngineeringTasks('train');
    const heldout = listEngineeringTasks('heldout');
    const combo = (t: (typeof train)[number]): string => `${t.kind}/${t.incident.fault.service}`;
    const trained = new Set(train.map(combo));
    for (const t of heldout) {
      expect(trained.has(combo(t)), t.id).toBe(false);
      expect(HELDOUT_COMBINATIONS[t.kind]).toContain(t.incident.fault.service);
    }
    const hidden = new Set(train.map((t) => t.hidden));
    expect(heldout.filter((t) => hidden.has(t.hidden))).toEqual([]);
  });

  it('puts the faulty change in the history exactly for a deploy or config fault', () => {
    for (const t of listEngineeringTasks()) {
      const f = t.incident.fault;
      expect(f.deploy !== undefined, t.id).toBe(t.kind === 'bad_deploy');
      expect(f.change !== undefined, t.id).toBe(t.kind === 'config_change');
      if (f.deploy) expect(t.incident.deploys).toContain(f.deploy);
      if (f.change) {
        expect(t.incident.configChanges).toContain(f.change);
        expect(t.incident.services.find((s) => s.name === f.service)?.config[f.change.key]).toBe(f.change.to);
      }
      // A deploy fault's service has no other deploy; no innocent change hits the faulty service near the onset.
      for (const c of [...t.incident.deploys, ...t.incident.configChanges]) {
        if (c.service === f.service && c !== f.deploy && c !== f.change) expect(c.at, t.id).toBeLessThan(f.onset - 20);
      }
    }
  });

  it('regenerates a task from its id alone and refuses unknown ids', () => {
    const t = getEngineeringTask('engineering-heldout-00017');
    expect(t).toBe(getEngineeringTask('engineering-heldout-00017'));
    expect(t.kind).toBe(FAULT_KINDS[17 % 5]);
    expect(() => getEngineeringTask('engineering-test-00001')).toThrow(TaskError);
    expect(() => getEngineeringTask('engineering-heldout-00060')).toThrow(/out of range: heldout has 60 tasks/);
  });

  it('tells the agent the runbook and the first message, never the fault', () => {
    for (const t of listEngineeringTasks('heldout')) {
      const info = engineeringTaskInfo(t);
      expect(info).toMatchObject({ id: t.id, domain: 'engineering', split: 'heldout' });
      expect(info.instruction).toMatch(/^# Incident response runbook/);
      expect(info.instruction.endsWith(`\n\n${t.opening}`)).toBe(true);
      const text = JSON.stringify(info);
      expect(text).not.toContain(`${t.incident.fault.service}: ${t.kind}`);
      if (t.incident.symptom !== t.incident.fault.service) expect(t.opening).not.toContain(t.incident.fault.service);
    }
  });
});
