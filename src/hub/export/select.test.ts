import { describe, expect, it } from 'vitest';
import { fakeTrajectory } from '../__fixtures__/trajectories.js';
import { filterTrajectories, parseSplitSpec, splitByTask, splitOfTask, taskPosition } from './select.js';

describe('filters', () => {
  it('keeps successes, rewards at least X and at most N steps', () => {
    const ok = fakeTrajectory({ task: 'a', reward: 0.9 });
    const fail = fakeTrajectory({ task: 'b', success: false });
    const low = fakeTrajectory({ task: 'c', reward: 0.2 });
    const long = fakeTrajectory({ task: 'd', actions: Array.from({ length: 5 }, (_, i) => ({ tool: i === 4 ? 'submit' : 'lookup', params: { i } })) });
    const all = [ok, fail, low, long];
    expect(filterTrajectories(all, { successOnly: true }).map((t) => t.task.id)).toEqual(['a', 'c', 'd']);
    expect(filterTrajectories(all, { minReward: 0.5 }).map((t) => t.task.id)).toEqual(['a', 'd']);
    expect(filterTrajectories(all, { maxSteps: 2 }).map((t) => t.task.id)).toEqual(['a', 'b', 'c']);
  });
});

describe('splits by task', () => {
  it('parses a split spec and names the bad part', () => {
    expect(parseSplitSpec('train=0.8,validation=0.1,test=0.1')).toEqual([
      { name: 'train', fraction: 0.8 },
      { name: 'validation', fraction: 0.1 },
      { name: 'test', fraction: 0.1 },
    ]);
    expect(() => parseSplitSpec('train=0.8,test=0.1')).toThrow(/sum to 0.9/);
    expect(() => parseSplitSpec('train=0.8,Test=0.2')).toThrow(/'Test=0.2' is not name=fraction/);
    expect(() => parseSplitSpec('train=0.5,train=0.5')).toThrow(/appears twice/);
    expect(() => parseSplitSpec('train=1,test=0')).toThrow(/must be > 0/);
  });

  it('puts every trajectory of a task in one split, near the requested shares, stable as data grows', () => {
    const shares = parseSplitSpec('train=0.8,validation=0.1,test=0.1');
    const tasks = Array.from({ length: 2000 }, (_, i) => `task-${i}`);
    const items = tasks.flatMap((t) => [1, 2, 3].map((k) => ({ t, k })));
    const bySplit = splitByTask(items, (x) => x.t, shares, 42);
    const seen = new Map<string, string>();
    for (const [split, xs] of bySplit) {
      for (const x of xs) {
        const prev = seen.get(x.t);
        expect(prev === undefined || prev === split).toBe(true);
        seen.set(x.t, split);
      }
    }
    expect(seen.size).toBe(2000);
    const taskCount = (s: string): number => new Set(bySplit.get(s)?.map((x) => x.t)).size;
    expect(taskCount('train') / 2000).toBeCloseTo(0.8, 1);
    expect(taskCount('validation') / 2000).toBeCloseTo(0.1, 1);
    expect(taskCount('test') / 2000).toBeCloseTo(0.1, 1);
    // Adding tasks never moves an existing one; another seed gives another assignment.
    const more = splitByTask([...items, { t: 'new-task', k: 1 }], (x) => x.t, shares, 42);
    for (const [split, xs] of more) for (const x of xs) if (x.t !== 'new-task') expect(seen.get(x.t)).toBe(split);
    const moved = tasks.filter((t) => splitOfTask(t, shares, 43) !== seen.get(t)).length;
    expect(moved).toBeGreaterThan(100);
    expect(taskPosition('x', 1)).toBeGreaterThanOrEqual(0);
    expect(taskPosition('x', 1)).toBeLessThan(1);
  });
});
