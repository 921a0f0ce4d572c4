import { describe, expect, it } from 'vitest';
import { getProfile, registerProfile } from '../core/profiles/registry.js';
import { parseTrajectory, trajectoryId, type Trajectory } from '../core/trajectory.js';
import { trajectory } from './__fixtures__/trajectories.js';
import { scoreTrajectory, scoreTrajectoryRules } from './score.js';
import type { JudgeLayer, RubricDefinition, StepJudgement } from './types.js';

const coding = getProfile('coding');

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object') {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

function fakeJudge(verdicts: StepJudgement[], seen: RubricDefinition[][] = []): JudgeLayer {
  return {
    name: 'fake',
    judge: (_t, _p, rubrics) => {
      seen.push([...rubrics]);
      return Promise.resolve(verdicts);
    },
    usage: () => ({ requests: 0, cacheHits: 0, inputTokens: 0, outputTokens: 0, costUsd: 0, failures: 0 }),
  };
}

const sample = (): Trajectory =>
  trajectory([
    ['file_read', { path: 'a.py' }, 'def run_job(): pass'],
    ['file_read', { path: 'a.py' }, 'def run_job(): pass'],
    ['file_write', { path: 'a.py', content: 'def run_job(): return 1' }],
    ['submit', {}, 'tests pass'],
  ]);

describe('scoreTrajectory', () => {
  it('never mutates its input, keeps the id, and produces a valid trajectory', async () => {
    const input = deepFreeze(sample());
    const before = JSON.stringify(input);
    const scored = await scoreTrajectory(input, { profile: coding });
    expect(JSON.stringify(input)).toBe(before);
    expect(scored).not.toBe(input);
    expect(scored.id).toBe(input.id);
    expect(trajectoryId(scored)).toBe(input.id);
    expect(parseTrajectory(JSON.parse(JSON.stringify(scored)), 'scored')).toEqual(scored);
    expect(scored.steps.every((s) => s.reward !== undefined)).toBe(true);
  });

  it('replaces rewards from an earlier scoring and agrees with the synchronous path', async () => {
    const once = scoreTrajectoryRules(sample(), coding);
    const twice = await scoreTrajectory(once, { profile: coding });
    expect(twice).toEqual(once);
  });

  it('records only rubrics the profile weights, with layer and effective weight', () => {
    const scored = scoreTrajectoryRules(sample(), getProfile('math'));
    for (const s of scored.steps) {
      const names = Object.keys(s.reward?.rubrics ?? {});
      expect(names.every((n) => n === 'redundancy' || n === 'efficiency')).toBe(true);
      const sum = Object.values(s.reward?.rubrics ?? {}).reduce((a, r) => a + (r.weight ?? 0) * r.score, 0);
      expect(sum).toBeCloseTo(s.reward?.score ?? -1, 9);
    }
  });

  it('sends only weighted judge rubrics to the judge and skips it when there are none', async () => {
    const seen: RubricDefinition[][] = [];
    const unjudged = registerProfile(
      { ...coding, name: 'coding-unjudged', rubricWeights: { ...coding.rubricWeights, goalProgress: 0, toolSelection: 0, parameterCorrectness: 0 } },
      { replace: true },
    );
    await scoreTrajectory(sample(), { profile: unjudged, judge: fakeJudge([], seen) });
    expect(seen).toEqual([]);
    const advisory = getProfile('advisory');
    await scoreTrajectory(sample(), { profile: advisory, judge: fakeJudge([], seen) });
    expect(seen[0]?.map((r) => r.name)).toEqual(['goalProgress', 'toolSelection', 'grounding']);
  });

  it('matches verdicts by step index, clamps scores and ignores what it did not ask for', async () => {
    const profile = registerProfile(
      { ...coding, name: 'coding-judged', rubricWeights: { ...coding.rubricWeights, goalProgress: 0.2 } },
      { replace: true },
    );
    const t = sample();
    const judge = fakeJudge([
      { stepIndex: 0, rubrics: { goalProgress: { score: 1.7, rationale: 'over' }, made_up: { score: 0 } } },
      { stepIndex: 2, rubrics: { goalProgress: { score: Number.NaN } } },
      { stepIndex: 99, rubrics: { goalProgress: { score: 0 } } },
      { stepIndex: 3, rubrics: { goalProgress: { score: -2 } } },
    ]);
    const scored = await scoreTrajectory(t, { profile, judge });
    expect(scored.steps[0]?.reward?.rubrics['goalProgress']).toMatchObject({ score: 1, layer: 'judge', rationale: 'over' });
    expect(scored.steps[0]?.reward?.rubrics['made_up']).toBeUndefined();
    expect(scored.steps[1]?.reward?.rubrics['goalProgress']).toBeUndefined();
    expect(scored.steps[2]?.reward?.rubrics['goalProgress']).toBeUndefined();
    expect(scored.steps[3]?.reward?.rubrics['goalProgress']?.score).toBe(0);
    expect(scored.reward?.layers['judge']).toBeGreaterThan(0);
  });

  it('does not throw on params JSON cannot represent (in-memory trajectories)', () => {
    const t = sample();
    const odd: Trajectory = { ...t, steps: t.steps.map((s) => ({ ...s, action: { tool: 'update_order', params: { order_id: 'x', details: { qty: Number.NaN } } } })) };
    const scored = scoreTrajectoryRules(odd, getProfile('conversation'));
    expect(scored.steps[1]?.reward?.rubrics['redundancy']?.score).toBe(0);
  });

  it('scores an empty trajectory', () => {
    const scored = scoreTrajectoryRules(trajectory([], { outcome: { success: false, score: 0, terminated: false, truncated: true, reason: 'max_steps' } }), coding);
    expect(scored.reward).toEqual({ total: expect.closeTo(0.2 / 0.7, 12) as number, outcome: 0, process: 1, efficiency: 1, layers: { env: 0, rules: expect.closeTo(0.2 / 0.7, 12) as number } });
  });

  it('adds a human rubric to every step under a step-level calibration', async () => {
    const calibration = { kind: 'isotonic', level: 'step' as const, apply: (x: number) => x / 2, toJSON: () => ({}) };
    const scored = await scoreTrajectory(sample(), { profile: coding, calibration });
    const step = scored.steps[0]?.reward;
    expect(step?.score).toBe(0.5);
    expect(step?.rubrics['humanCalibration']).toEqual({ score: 0.5, layer: 'human', rationale: 'isotonic of the automatic step score 1' });
    expect(parseTrajectory(scored, 'x').steps[0]?.reward?.score).toBe(0.5);
  });

  it('scores long trajectories and keeps them valid', () => {
    const n = 5000;
    const t = trajectory(Array.from({ length: n }, (_, i) => (i % 3 === 2 ? ['file_write', { path: `f${i % 7}.py`, content: `x = ${i % 4}` }] : ['file_read', { path: `f${i % 7}.py` }, `x = ${i}`])));
    const scored = scoreTrajectoryRules(t, coding);
    expect(scored.steps).toHaveLength(n);
    expect(parseTrajectory(scored, 'long').reward?.efficiency).toBeCloseTo(30 / n, 12);
  });
});
