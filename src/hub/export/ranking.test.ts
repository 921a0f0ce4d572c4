import { describe, expect, it } from 'vitest';
import { Rng } from '../../core/rng.js';
import type { Trajectory } from '../../core/trajectory.js';
import { fakeTrajectory } from '../__fixtures__/trajectories.js';
import { actionNgrams, jaccard, QUALITY_WEIGHTS, selectTop } from './ranking.js';

function solve(task: string, extra: number, opts: { success?: boolean; reward?: number; startedAt?: string; variant?: number } = {}): Trajectory {
  const actions = [
    ...Array.from({ length: extra }, (_, i) => ({ tool: 'search', params: { query: `q${i}-${opts.variant ?? 0}` } })),
    { tool: 'submit', params: { answer: '1' } },
  ];
  return fakeTrajectory({ task, actions, ...opts });
}

describe('quality ranking', () => {
  it('prefers success, reward and short solutions', () => {
    const good = solve('a', 1, { reward: 0.9 });
    const long = solve('a', 4, { reward: 0.9, variant: 1 });
    const failed = solve('a', 1, { success: false, reward: 0.9, variant: 2 });
    const order = selectTop([failed, long, good], 3).map((s) => s.trajectory.id);
    expect(order).toEqual([good.id, long.id, failed.id]);
    const [best] = selectTop([good], 1);
    expect(best?.score).toEqual({ reward: 0.9, outcome: 1, length: 1, novelty: 1, freshness: 1, quality: 0.4 * 0.9 + 0.3 + 0.1 + 0.15 + 0.05 });
    expect(Object.values(QUALITY_WEIGHTS).reduce((a, b) => a + b, 0)).toBeCloseTo(1, 12);
  });

  it('penalises copies of what is already selected (novelty), per task', () => {
    const a1 = solve('a', 2, { reward: 0.8 });
    const a2 = solve('a', 2, { reward: 0.8, startedAt: '2026-01-01T00:00:01.000Z' }); // same actions
    const a3 = solve('a', 2, { reward: 0.75, variant: 9 });
    const top2 = selectTop([a1, a2, a3], 2);
    expect(top2.map((s) => s.trajectory)).toEqual([a2, a3]);
    expect(selectTop([a1, a2, a3], 3)[2]?.score.novelty).toBe(0);
    expect(jaccard(actionNgrams(a1), actionNgrams(a2))).toBe(1);
    // Another task's identical actions do not count against it.
    const b = fakeTrajectory({ task: 'b', actions: a1.steps.map((s) => ({ tool: s.action.tool, params: s.action.params })), reward: 0.8 });
    expect(selectTop([a1, b], 2).every((s) => s.score.novelty === 1)).toBe(true);
  });

  it('gives fresher trajectories a small edge (half-life 7 days)', () => {
    const old = solve('a', 1, { reward: 0.5, startedAt: '2026-01-01T00:00:00.000Z' });
    const fresh = solve('a', 1, { reward: 0.5, startedAt: '2026-01-08T00:00:00.000Z', variant: 3 });
    const [first, second] = selectTop([old, fresh], 2);
    expect(first?.trajectory).toBe(fresh);
    expect(second?.score.freshness).toBeCloseTo(0.5, 9);
  });

  it('lazy greedy selection equals naive greedy recomputation', () => {
    const rng = new Rng(5);
    const pool = Array.from({ length: 60 }, () =>
      solve(`t${rng.int(0, 5)}`, rng.int(0, 3), { reward: rng.int(0, 10) / 10, success: rng.next() < 0.7, variant: rng.int(0, 4), startedAt: new Date(Date.UTC(2026, 0, 1 + rng.int(0, 20))).toISOString() }),
    ).map((t, i) => ({ ...t, metadata: { i } }));
    const lazy = selectTop(pool, 25).map((s) => s.index);
    // Naive: recompute every candidate's novelty against everything chosen, every round.
    const base = new Map(selectTop(pool, pool.length).map((s) => [s.index, s.score]));
    const chosen: number[] = [];
    while (chosen.length < 25) {
      let best = -1;
      let bestQ = -Infinity;
      for (let i = 0; i < pool.length; i++) {
        if (chosen.includes(i)) continue;
        const t = pool[i] as Trajectory;
        const sameTask = chosen.map((c) => pool[c] as Trajectory).filter((c) => c.task.id === t.task.id);
        const novelty = sameTask.reduce((m, c) => Math.min(m, 1 - jaccard(actionNgrams(t), actionNgrams(c))), 1);
        const b = base.get(i) as { reward: number; outcome: number; length: number; freshness: number };
        const quality = 0.4 * b.reward + 0.3 * b.outcome + 0.1 * b.length + 0.15 * novelty + 0.05 * b.freshness;
        const bestT = pool[best];
        const wins = quality > bestQ || (quality === bestQ && bestT !== undefined && (t.id < bestT.id || (t.id === bestT.id && i < best)));
        if (wins) {
          best = i;
          bestQ = quality;
        }
      }
      chosen.push(best);
    }
    expect(lazy).toEqual(chosen);
  });
});
