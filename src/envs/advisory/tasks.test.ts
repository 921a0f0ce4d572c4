import { describe, expect, it } from 'vitest';
import { TaskError } from '../../core/errors.js';
import { ADVISORY_POOLS, ADVISORY_TASK_COUNTS, advisoryTaskInfo, getAdvisoryTask, listAdvisoryTasks } from './tasks.js';

describe('advisory tasks', () => {
  it('has 300 training and 60 held-out tasks, with every kind of wish in a fair share', () => {
    for (const split of ['train', 'heldout'] as const) {
      const tasks = listAdvisoryTasks(split);
      expect(tasks).toHaveLength(ADVISORY_TASK_COUNTS[split]);
      expect(new Set(tasks.map((t) => t.id)).size).toBe(tasks.length);
      const share = (f: (t: (typeof tasks)[number]) => boolean): number => tasks.filter(f).length / tasks.length;
      expect(share((t) => t.request.hotel.minStars !== undefined)).toBeGreaterThan(0.2);
      expect(share((t) => t.request.hotel.amenities.length > 0)).toBeGreaterThan(0.3);
      expect(share((t) => t.request.flights.nonstop)).toBeGreaterThan(0.2);
      expect(share((t) => t.request.flights.arriveBy !== undefined)).toBeGreaterThan(0.1);
      expect(share((t) => t.request.activities.category !== undefined)).toBeGreaterThan(0.3);
      expect(share((t) => t.request.travellers > 1)).toBeGreaterThan(0.5);
      for (const n of [1, 2, 3]) expect(share((t) => t.request.activities.count === n)).toBeGreaterThan(0.15);
    }
  });

  it('gives held-out tasks destinations and clients, hence hidden instructions and markets, that no training task has', () => {
    const train = listAdvisoryTasks('train');
    const heldout = listAdvisoryTasks('heldout');
    const hidden = new Set(train.map((t) => t.hidden));
    const places = new Set(train.map((t) => t.request.destination));
    const clients = new Set(train.map((t) => t.client.split(' ')[0]));
    for (const t of heldout) {
      expect(hidden.has(t.hidden)).toBe(false);
      expect(places.has(t.request.destination)).toBe(false);
      expect(clients.has(t.client.split(' ')[0])).toBe(false);
    }
    expect(ADVISORY_POOLS.train.destinations.filter((d) => ADVISORY_POOLS.heldout.destinations.includes(d))).toEqual([]);
    expect(ADVISORY_POOLS.train.first.filter((d) => ADVISORY_POOLS.heldout.first.includes(d))).toEqual([]);
    expect(new Set(heldout.map((t) => t.hidden)).size).toBe(heldout.length);
  });

  it('regenerates a task from its id alone and refuses unknown ids', () => {
    const t = getAdvisoryTask('advisory-heldout-00017');
    expect(t).toBe(getAdvisoryTask('advisory-heldout-00017'));
    expect(t.split).toBe('heldout');
    expect(() => getAdvisoryTask('advisory-test-00001')).toThrow(TaskError);
    expect(() => getAdvisoryTask('advisory-heldout-00060')).toThrow(/out of range: heldout has 60 tasks/);
  });

  it('tells the agent the brief and the first message, never the client\'s wishes', () => {
    for (const t of listAdvisoryTasks('heldout')) {
      const info = advisoryTaskInfo(t);
      expect(info).toMatchObject({ id: t.id, domain: 'advisory', split: 'heldout', metadata: { destination: t.request.destination } });
      expect(info.instruction).toMatch(/^# Travel advisory brief[\s\S]*# The client's first message\n\n/);
      expect(info.instruction.endsWith(t.opening)).toBe(true);
      const text = JSON.stringify(info);
      for (const secret of [t.request.origin, t.request.departDate, `$${t.request.budget.toLocaleString('en-US')}`, t.client, t.best.plan.hotel]) expect(text).not.toContain(secret);
    }
  });
});
