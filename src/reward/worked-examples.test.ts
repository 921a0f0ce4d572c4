import { describe, expect, it } from 'vitest';
import { getProfile } from '../core/profiles/registry.js';
import { parseTrajectory, type Trajectory } from '../core/trajectory.js';
import { trajectory } from './__fixtures__/trajectories.js';
import { outcomeScore } from './rules/outcome.js';
import { prepareRuleContext } from './rules/context.js';
import { scoreEfficiency, trajectoryEfficiency } from './rules/efficiency.js';
import { InformationUseCode, scoreInformationUse } from './rules/information-use.js';
import { scoreRedundancy } from './rules/redundancy.js';
import { scoreRegression } from './rules/regression.js';
import type { RuleColumn } from './rules/types.js';
import { scoreTrajectory, scoreTrajectoryRules } from './score.js';
import type { JudgeLayer, ScoreCalibration, StepJudgement } from './types.js';

/**
 * The worked examples of docs/reward.md, number for number. If a formula changes, the doc and this file
 * change together.
 */

const coding = getProfile('coding');
const discussion = getProfile('discussion');

/** Scores as an array, `null` where the rule does not apply. */
function scoresOf(col: RuleColumn): (number | null)[] {
  return [...col.scores].map((s) => (Number.isNaN(s) ? null : s));
}

function mean(xs: readonly (number | null)[]): number {
  const present = xs.filter((x): x is number => x !== null);
  return present.reduce((a, b) => a + b, 0) / present.length;
}

describe('worked example 1 — redundancy', () => {
  const t = trajectory([
    ['file_read', { path: 'a.py' }],
    ['file_read', { path: 'a.py' }],
    ['file_read', { path: 'b.py' }],
    ['file_write', { path: 'b.py', content: 'x = 2\n' }],
    ['file_read', { path: 'a.py' }],
    ['file_read', { path: 'b.py' }],
    ['file_read', { path: 'b.py', start_line: 1, end_line: 1 }],
    ['shell', { command: 'pytest -q' }],
    ['shell', { command: 'pytest -q' }],
    ['file_read', { path: 'a.py' }],
  ]);

  it('scores 1,0,1,1,0,1,1,1,0,1 and aggregates to 7/10', () => {
    const s = scoresOf(scoreRedundancy(prepareRuleContext(t, coding)));
    expect(s).toEqual([1, 0, 1, 1, 0, 1, 1, 1, 0, 1]);
    expect(mean(s)).toBe(0.7);
  });
});

describe('worked example 2 — regression', () => {
  const t = trajectory([
    ['file_write', { path: 'a.py', content: 'v1' }],
    ['file_write', { path: 'a.py', content: 'v2' }],
    ['file_write', { path: 'a.py', content: 'v1' }],
    ['file_write', { path: 'a.py', content: 'v1' }],
    ['file_write', { path: 'b.py', content: 'w1' }],
    ['git', { subcommand: 'checkout', args: ['--', 'b.py'] }],
    ['git', { subcommand: 'checkout', args: ['--', 'c.py'] }],
  ]);

  it('scores 1,1,0,1,1,0,1 and aggregates to 5/7', () => {
    const col = scoreRegression(prepareRuleContext(t, coding));
    const s = scoresOf(col);
    expect(s).toEqual([1, 1, 0, 1, 1, 0, 1]);
    expect(col.refs[2]).toBe(1); // restores what step 1 replaced
    expect(mean(s)).toBeCloseTo(5 / 7, 12);
  });
});

describe('worked example 3 — information use', () => {
  const t = trajectory(
    [
      ['file_read', { path: 'calc.py' }, 'def add_numbers(a, b): return a - b'],
      ['search', { pattern: 'add_numbers' }, 'tests/test_calc.py:3: assert add_numbers(2, 2) == 4'],
      ['file_read', { path: 'README.md' }, '# Calculator'],
      ['file_read', { path: 'notes.txt' }, 'add_numbers must return the sum'],
      ['file_write', { path: 'calc.py', content: 'def add_numbers(a, b): return a + b' }, 'ok'],
      ['submit', {}, 'tests pass'],
    ],
    { instruction: 'Fix the bug in calc.py (see notes.txt).' },
  );

  it('scores n/a,1,0,n/a,1,n/a and aggregates to 2/3', () => {
    const col = scoreInformationUse(prepareRuleContext(t, coding));
    const s = scoresOf(col);
    expect(s).toEqual([null, 1, 0, null, 1, null]);
    expect([...col.codes]).toEqual([
      InformationUseCode.NOTHING_REVEALED,
      InformationUseCode.USES,
      InformationUseCode.IGNORES,
      InformationUseCode.ACTS_ON_TASK,
      InformationUseCode.USES,
      InformationUseCode.NO_CONTENT,
    ]);
    expect(col.counts[4]).toBe(2);
    expect(mean(s)).toBeCloseTo(2 / 3, 12);
  });
});

describe('worked example 4 — efficiency', () => {
  const six = trajectory(Array.from({ length: 6 }, (_, i) => ['file_read', { path: `f${i}.py` }] as [string, Record<string, unknown>]));
  const four = trajectory(Array.from({ length: 4 }, (_, i) => ['file_read', { path: `f${i}.py` }] as [string, Record<string, unknown>]));

  it('R = 4, n = 6: 1,1,1,1,0,0 and E = 2/3', () => {
    expect(scoresOf(scoreEfficiency(prepareRuleContext(six, coding, 4)))).toEqual([1, 1, 1, 1, 0, 0]);
    expect(trajectoryEfficiency(6, 4)).toBeCloseTo(2 / 3, 12);
  });

  it('R = 2.5, n = 4: 1,1,0.5,0 and E = 0.625', () => {
    const s = scoresOf(scoreEfficiency(prepareRuleContext(four, coding, 2.5)));
    expect(s).toEqual([1, 1, 0.5, 0]);
    expect(trajectoryEfficiency(4, 2.5)).toBe(0.625);
    expect(mean(s)).toBe(0.625);
  });
});

describe('worked example 5 — outcome', () => {
  it('maps success and score', () => {
    expect(outcomeScore({ success: true, score: 1 })).toBe(1);
    expect(outcomeScore({ success: false, score: 0.6 })).toBe(0.6);
    expect(outcomeScore({ success: false, score: 0 })).toBe(0);
    expect(outcomeScore({ success: true, score: 0 })).toBe(1);
  });
});

describe('worked example 6 — combination (coding, referenceSteps 3)', () => {
  const t = trajectory(
    [
      ['file_read', { path: 'calc.py' }, 'def add_numbers(a, b): return a - b'],
      ['file_read', { path: 'calc.py' }, 'def add_numbers(a, b): return a - b'],
      ['file_write', { path: 'calc.py', content: 'def add_numbers(a, b): return a + b' }, 'ok'],
      ['submit', {}, '2 of 2 tests pass'],
    ],
    { instruction: 'Fix calc.py so tests pass.' },
  );

  it('gives step scores 1, 0.5, 1, 1/3, process 0.75 and total 0.875', () => {
    const scored = parseTrajectory(scoreTrajectoryRules(t, coding, 3), 'example-6');
    const stepScores = scored.steps.map((s) => s.reward?.score);
    expect(stepScores[0]).toBeCloseTo(1, 12);
    expect(stepScores[1]).toBeCloseTo(0.5, 12);
    expect(stepScores[2]).toBeCloseTo(1, 12);
    expect(stepScores[3]).toBeCloseTo(1 / 3, 12);
    expect(Object.keys(scored.steps[0]?.reward?.rubrics ?? {})).toEqual(['redundancy', 'efficiency']);
    expect(Object.keys(scored.steps[1]?.reward?.rubrics ?? {})).toEqual(['redundancy', 'informationUse', 'efficiency']);
    expect(Object.keys(scored.steps[2]?.reward?.rubrics ?? {})).toEqual(['redundancy', 'regression', 'informationUse', 'efficiency']);
    expect(scored.steps[1]?.reward?.rubrics['efficiency']).toMatchObject({ score: 1, layer: 'rules', weight: 0.5 });
    const r = scored.reward as NonNullable<Trajectory['reward']>;
    expect(r.outcome).toBe(1);
    expect(r.efficiency).toBe(0.75);
    expect(r.process).toBeCloseTo(0.75, 12);
    expect(r.total).toBeCloseTo(0.875, 12);
    expect(r.layers['env']).toBeCloseTo(0.5, 12);
    expect(r.layers['rules']).toBeCloseTo(0.375, 12);
    expect(Object.keys(r.layers).sort()).toEqual(['env', 'rules']);
  });

  it('calibrates the total with apply(x) = 0.2 + 0.6x to 0.725, layers.human = -0.15', async () => {
    const calibration: ScoreCalibration = { kind: 'linear', apply: (x) => 0.2 + 0.6 * x, toJSON: () => ({ a: 0.2, b: 0.6 }) };
    const scored = await scoreTrajectory(t, { profile: coding, calibration, referenceSteps: 3 });
    const r = scored.reward as NonNullable<Trajectory['reward']>;
    expect(r.total).toBeCloseTo(0.725, 12);
    expect(r.layers['human']).toBeCloseTo(-0.15, 12);
    expect((r.layers['env'] ?? 0) + (r.layers['rules'] ?? 0) + (r.layers['human'] ?? 0)).toBeCloseTo(r.total, 12);
    // Step scores are not calibrated.
    expect(scored.steps[1]?.reward?.score).toBeCloseTo(0.5, 12);
  });
});

describe('worked example 7 — combination with a judge (discussion)', () => {
  const t = trajectory(
    [
      ['read_thread', { thread_id: 't-7' }, 'Alice: the deploy failed at migration_42'],
      ['post', { content: 'Is migration_42 the culprit?' }, 'Bob: yes, migration_42 locks the table'],
      ['conclude', { summary: 'migration_42 locks the table; deploy failed' }, 'concluded'],
    ],
    { instruction: 'Summarise thread t-7 and conclude.', domain: 'discussion' },
  );
  const verdicts = [1, 0.5, 1];
  const judge: JudgeLayer = {
    name: 'fixed',
    judge: (_t, _p, rubrics): Promise<StepJudgement[]> => {
      expect(rubrics.map((r) => r.name)).toEqual(['goalProgress']);
      return Promise.resolve(verdicts.map((score, stepIndex) => ({ stepIndex, rubrics: { goalProgress: { score, rationale: `verdict ${score}` } } })));
    },
    usage: () => ({ requests: 1, cacheHits: 0, inputTokens: 0, outputTokens: 0, costUsd: 0, failures: 0 }),
  };

  it('gives step scores 1, 5/6, 1, process 14/15, total 29/30 and a judge layer of 1/6', async () => {
    const scored = parseTrajectory(await scoreTrajectory(t, { profile: discussion, judge }), 'example-7');
    const stepScores = scored.steps.map((s) => s.reward?.score ?? Number.NaN);
    expect(stepScores[0]).toBeCloseTo(1, 12);
    expect(stepScores[1]).toBeCloseTo(5 / 6, 12);
    expect(stepScores[2]).toBeCloseTo(1, 12);
    expect(scored.steps[1]?.reward?.rubrics['goalProgress']).toEqual({ score: 0.5, layer: 'judge', weight: expect.closeTo(0.2 / 0.6, 12) as number, rationale: 'verdict 0.5' });
    const r = scored.reward as NonNullable<Trajectory['reward']>;
    expect(r.process).toBeCloseTo(14 / 15, 12);
    expect(r.total).toBeCloseTo(29 / 30, 12);
    expect(r.layers['env']).toBeCloseTo(0.4, 12);
    expect(r.layers['rules']).toBeCloseTo(0.4, 12);
    expect(r.layers['judge']).toBeCloseTo(1 / 6, 12);
  });

  it('without the judge: process 1, total 1, layers env 0.5 and rules 0.5', async () => {
    const scored = await scoreTrajectory(t, { profile: discussion });
    const r = scored.reward as NonNullable<Trajectory['reward']>;
    expect(r.process).toBeCloseTo(1, 12);
    expect(r.total).toBeCloseTo(1, 12);
    expect(r.layers).toEqual({ env: expect.closeTo(0.5, 12) as number, rules: expect.closeTo(0.5, 12) as number });
    expect(scored.steps.every((s) => s.reward?.rubrics['goalProgress'] === undefined)).toBe(true);
  });
});
