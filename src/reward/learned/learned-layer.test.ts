import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../core/errors.js';
import { getProfile } from '../../core/profiles/registry.js';
import type { Trajectory } from '../../core/trajectory.js';
import { trajectory } from '../__fixtures__/trajectories.js';
import { scoreTrajectory } from '../score.js';
import type { LearnedScorer } from '../types.js';

/**
 * The combination of the learned layer, number for number as docs/reward.md ("Learned reward model") states
 * it on worked example 6. The ONNX scorer itself is tested end to end in `onnx-reward-model.test.ts`; here
 * the step scores are given, so the arithmetic can be checked exactly.
 */

function given(scores: readonly number[]): LearnedScorer {
  return { name: 'given', scoreSteps: async (t) => Float64Array.from(scores.slice(0, t.steps.length)) };
}

const t = trajectory(
  [
    ['file_read', { path: 'calc.py' }, 'def add_numbers(a, b): return a - b'],
    ['file_read', { path: 'calc.py' }, 'def add_numbers(a, b): return a - b'],
    ['file_write', { path: 'calc.py', content: 'def add_numbers(a, b): return a + b' }, 'ok'],
    ['submit', {}, '2 of 2 tests pass'],
  ],
  { instruction: 'Fix calc.py so tests pass.' },
);
const coding = getProfile('coding');

describe('learned layer (worked example 6 with w_learned = 0.2, m = 0.9, 0.1, 0.8, 0.6)', () => {
  it('adds the rubric learned to every step and layers.learned to the summary', async () => {
    const scored = await scoreTrajectory(t, { profile: coding, referenceSteps: 3, learned: { scorer: given([0.9, 0.1, 0.8, 0.6]), weight: 0.2 } });
    const step1 = scored.steps[1]?.reward;
    expect(step1?.rubrics['learned']).toEqual({ score: 0.1, layer: 'learned', weight: expect.closeTo(0.2 / 0.6, 12) as number });
    expect(step1?.score).toBeCloseTo(0.22 / 0.6, 12);
    const r = scored.reward as NonNullable<Trajectory['reward']>;
    expect(r.total).toBeCloseTo(0.995 / 1.2, 12);
    expect(r.process).toBeCloseTo((0.225 + 0.12) / 0.5, 12);
    expect(r.layers['learned']).toBeCloseTo(0.1, 12);
    expect(Object.values(r.layers).reduce((a, b) => a + b, 0)).toBeCloseTo(r.total, 12);
    for (const s of scored.steps) expect(s.reward?.rubrics['learned']?.layer).toBe('learned');
  });

  it('clamps to [0, 1] and refuses wrong counts, non-finite scores and bad weights, naming the trajectory', async () => {
    const clamped = await scoreTrajectory(t, { profile: coding, learned: { scorer: given([1.5, -1, 0.5, 0.5]), weight: 1 } });
    expect(clamped.steps.map((s) => s.reward?.rubrics['learned']?.score)).toEqual([1, 0, 0.5, 0.5]);
    await expect(scoreTrajectory(t, { profile: coding, learned: { scorer: given([0.5]), weight: 1 } })).rejects.toThrow(
      new RegExp(`returned 1 scores for trajectory ${t.id} with 4 steps`),
    );
    await expect(scoreTrajectory(t, { profile: coding, learned: { scorer: given([0.5, Number.NaN, 1, 1]), weight: 1 } })).rejects.toThrow(/returned NaN for step 1/);
    await expect(scoreTrajectory(t, { profile: coding, learned: { scorer: given([1, 1, 1, 1]), weight: 0 } })).rejects.toThrow(ConfigError);
  });
});
