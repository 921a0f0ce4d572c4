import { describe, expect, it } from 'vitest';
import { makeTrajectory, type Trajectory } from '../core/trajectory.js';
import { buildPreferences, preferenceScore } from './preferences.js';
import { defined } from '../core/defined.js';

/** A trajectory of `task` by agent `agent` (distinct agents → distinct ids) with a reward total or only an outcome score. */
function traj(task: string, agent: string, score: { total?: number; outcome?: number }, domain = 'math'): Trajectory {
  return makeTrajectory({
    task: { id: task, domain, instruction: `do ${task}` },
    envId: 'gymflow/text-math-v0',
    agent: { name: agent },
    steps: [],
    outcome: { success: (score.outcome ?? 0) >= 0.5, score: score.outcome ?? 0, terminated: true, truncated: false, reason: 'submitted' },
    ...defined({ reward: score.total !== undefined ? { total: score.total, outcome: 0, process: 0, efficiency: 0, layers: {} } : undefined }),
    metadata: {},
  });
}

describe('preference pairs', () => {
  it('scores by reward.total, falling back to outcome.score', () => {
    expect(preferenceScore(traj('t', 'a', { total: 0.7, outcome: 0.1 }))).toBe(0.7);
    expect(preferenceScore(traj('t', 'a', { outcome: 0.4 }))).toBe(0.4);
  });

  it('pairs within a task by margin, chosen = higher score, never across tasks', () => {
    const a = traj('t1', 'a', { total: 0.9 });
    const b = traj('t1', 'b', { total: 0.3 });
    const c = traj('t1', 'c', { total: 0.25 });
    const other = traj('t2', 'x', { total: 0.0 });
    // Same task id in another domain is another task.
    const otherDomain = traj('t1', 'y', { total: 0.0 }, 'coding');
    const { pairs, stats } = buildPreferences([a, b, c, other, otherDomain], { minMargin: 0.1 });
    // Candidates in t1: a>b (0.6), a>c (0.65), b>c (0.05 < 0.1, dropped).
    expect(pairs.map((p) => [p.chosenId, p.rejectedId, p.margin])).toEqual([
      [a.id, c.id, 0.65],
      [a.id, b.id, 0.6000000000000001],
    ]);
    expect(pairs.every((p) => p.task.id === 't1' && p.task.domain === 'math')).toBe(true);
    expect(stats).toMatchObject({ trajectories: 5, tasks: 3, singletonTasks: 2, considered: 3, droppedBelowMargin: 1, droppedTies: 0, pairs: 2 });
  });

  it('counts a margin equal to minMargin despite floating point (0.3 − 0.2)', () => {
    const { pairs } = buildPreferences([traj('t', 'a', { total: 0.3 }), traj('t', 'b', { total: 0.2 })], { minMargin: 0.1 });
    expect(pairs).toHaveLength(1);
  });

  it('drops ties even with minMargin 0, and counts duplicate ids once', () => {
    const a = traj('t', 'a', { outcome: 1 });
    const b = traj('t', 'b', { outcome: 1 });
    const c = traj('t', 'c', { outcome: 0 });
    const { pairs, stats } = buildPreferences([a, b, c, a], { minMargin: 0 });
    expect(stats.duplicates).toBe(1);
    expect(stats.droppedTies).toBe(1);
    expect(pairs.map((p) => p.rejectedId)).toEqual([c.id, c.id]);
    expect(pairs.map((p) => p.chosenId).sort()).toEqual([a.id, b.id].sort());
  });

  it('keeps the largest margins under a per-task cap, ties broken by ids, independent of input order', () => {
    const ts = [1, 0.8, 0.5, 0.5, 0.1].map((s, i) => traj('t', `agent-${i}`, { total: s }));
    const run = (input: Trajectory[]) => buildPreferences(input, { minMargin: 0.1, maxPairsPerTask: 3 });
    const { pairs, stats } = run(ts);
    // Margins: 1−0.1 = 0.9; 0.8−0.1 = 0.7; then 1−0.5 = 0.5 twice (chosen agent-0 in both, so the
    // smaller rejected id wins); 0.4 ×2, 0.3 ×2, 0.2 are cut.
    expect(pairs.map((p) => Number(p.margin.toFixed(12)))).toEqual([0.9, 0.7, 0.5]);
    const half = [ts[2]!.id, ts[3]!.id].sort();
    expect(pairs[2]!.chosenId).toBe(ts[0]!.id);
    expect(pairs[2]!.rejectedId).toBe(half[0]);
    // 10 unordered pairs: 1 tie (0.5, 0.5), 9 candidates, 3 kept.
    expect(stats).toMatchObject({ considered: 10, droppedTies: 1, droppedByCap: 6, pairs: 3 });
    expect(run([...ts].reverse()).pairs).toEqual(pairs);
  });

  it('rejects bad options', () => {
    expect(() => buildPreferences([], { minMargin: -1 })).toThrow(/minMargin/);
    expect(() => buildPreferences([], { maxPairsPerTask: 1.5 })).toThrow(/maxPairsPerTask/);
  });
});
