import { describe, expect, it } from 'vitest';
import { makeTrajectory, type Trajectory } from '../core/trajectory.js';
import { leaderboard } from './leaderboard.js';
import { defined } from '../core/defined.js';

let serial = 0;
function traj(agent: { name: string; model?: string }, task: string, score: { total?: number; outcome: number }, success: boolean): Trajectory {
  serial++;
  return makeTrajectory({
    task: { id: task, domain: 'math', instruction: `do ${task}` },
    envId: 'gymflow/text-math-v0',
    agent,
    steps: [{ index: 0, action: { tool: 'submit', params: { n: serial } }, observation: '', startedAt: '2026-01-01T00:00:00.000Z', durationMs: 1 }],
    outcome: { success, score: score.outcome, terminated: true, truncated: false, reason: 'submitted' },
    ...defined({ reward: score.total !== undefined ? { total: score.total, outcome: 0, process: 0, efficiency: 0, layers: {} } : undefined }),
    metadata: {},
  });
}

const A = { name: 'A', model: 'm1' };
const B = { name: 'B', model: 'm1' };
const C = { name: 'C' };
const data = [
  traj(A, 't1', { total: 1, outcome: 1 }, true),
  traj(A, 't2', { total: 0.5, outcome: 0 }, false),
  traj(A, 't3', { total: 0, outcome: 0 }, false),
  // B has no reward summaries: outcome.score is its score.
  traj(B, 't1', { outcome: 1 }, true),
  traj(B, 't2', { outcome: 0 }, false),
  traj(C, 't1', { total: 0.9, outcome: 1 }, true),
];

describe('leaderboard', () => {
  it('ranks agents with hand-computed means, Wilson and bootstrap intervals', () => {
    const rows = leaderboard(data, { by: 'agent', resamples: 2000, seed: 1 });
    // Means: A (1 + 0.5 + 0)/3 = 0.5, B (1 + 0)/2 = 0.5, C 0.9. A and B tie on mean; B's success rate
    // 1/2 beats A's 1/3, so the order is C, B, A.
    expect(rows.map((r) => r.key)).toEqual(['C', 'B (m1)', 'A (m1)']);
    const [c, b, a] = rows as [typeof rows[0], typeof rows[0], typeof rows[0]];
    expect(c).toMatchObject({ agent: 'C', n: 1, successes: 1 });
    expect(c.model).toBeUndefined();
    expect(b).toMatchObject({ agent: 'B', model: 'm1', n: 2, successes: 1 });
    expect(a.meanScore.estimate).toBe(0.5);
    expect(b.meanScore.estimate).toBe(0.5);
    expect(c.meanScore.estimate).toBe(0.9);

    // Wilson, z = 1.959964, z² = 3.841459 (hand computation, checked with Python):
    //  A: p = 1/3, n = 3: d = 1 + z²/3 = 2.280486; centre = (1/3 + z²/6)/d = 0.426915;
    //     half = z/d·sqrt(p(1−p)/3 + z²/36) = 0.859451·0.425184 = 0.365423 → [0.061492, 0.792340].
    //  B: p = 1/2, n = 2: d = 2.920730; centre = 0.5; half = 0.671050·sqrt(0.125 + 0.240091) = 0.405454
    //     → [0.094531, 0.905469].
    //  C: p = 1, n = 1: d = 4.841459; centre = (1 + 1.920730)/d = 0.603275; half = 0.404829·0.979982
    //     = 0.396725 → [0.206549, 1].
    expect(a.successRate.lo).toBeCloseTo(0.06149194472039615, 9);
    expect(a.successRate.hi).toBeCloseTo(0.7923403991979523, 9);
    expect(b.successRate.lo).toBeCloseTo(0.09453120573423074, 9);
    expect(b.successRate.hi).toBeCloseTo(0.9054687942657693, 9);
    expect(c.successRate.lo).toBeCloseTo(1 - 0.7934506856227626, 9); // by symmetry with Wilson(0, 1) from Python
    expect(c.successRate.hi).toBe(1);

    // Bootstrap percentile, by hand: C has one trajectory, so every resample mean is 0.9 → [0.9, 0.9].
    // B's resample means are 0, 0.5, 1 with probability 1/4, 1/2, 1/4: the 2.5 % and 97.5 % points fall
    // inside the atoms at 0 and 1 → [0, 1]. A's extremes 0 and 1 each have probability 1/27 ≈ 3.7 % > 2.5 %
    // (≈ 74 of 2000 resamples, far above the ≈ 50 needed) → [0, 1].
    expect([c.meanScore.lo, c.meanScore.hi]).toEqual([0.9, 0.9]);
    expect([b.meanScore.lo, b.meanScore.hi]).toEqual([0, 1]);
    expect([a.meanScore.lo, a.meanScore.hi]).toEqual([0, 1]);
    expect(a.meanScore.resamples).toBe(2000);
  });

  it('groups by model and by task', () => {
    const byModel = leaderboard(data, { by: 'model', resamples: 200 });
    // m1: A and B together: (1 + 0.5 + 0 + 1 + 0)/5 = 0.5, 2 of 5 successes; (none): C alone, 0.9.
    expect(byModel.map((r) => [r.key, r.n, r.meanScore.estimate, r.successes])).toEqual([
      ['(none)', 1, 0.9, 1],
      ['m1', 5, 0.5, 2],
    ]);
    const byTask = leaderboard(data, { by: 'task', resamples: 200 });
    // t1: (1 + 1 + 0.9)/3 = 0.9667; t2: (0.5 + 0)/2 = 0.25; t3: 0.
    expect(byTask.map((r) => r.key)).toEqual(['math/t1', 'math/t2', 'math/t3']);
    expect(byTask[0]!.meanScore.estimate).toBeCloseTo(2.9 / 3, 12);
    expect(byTask[0]).toMatchObject({ task: 't1', domain: 'math', n: 3, successes: 3 });
  });

  it('is deterministic and independent of input order and of the other groups', () => {
    const one = leaderboard(data, { by: 'agent', resamples: 300, seed: 4 });
    const reversed = leaderboard([...data].reverse(), { by: 'agent', resamples: 300, seed: 4 });
    expect(reversed.map((r) => r.meanScore)).toEqual(one.map((r) => r.meanScore));
    const onlyA = leaderboard(data.slice(0, 3), { by: 'agent', resamples: 300, seed: 4 });
    expect(onlyA[0]!.meanScore).toEqual(one.find((r) => r.key === 'A (m1)')!.meanScore);
  });
});
