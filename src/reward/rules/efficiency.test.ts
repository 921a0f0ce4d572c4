import { describe, expect, it } from 'vitest';
import { getProfile } from '../../core/profiles/registry.js';
import { trajectory } from '../__fixtures__/trajectories.js';
import { prepareRuleContext } from './context.js';
import { efficiencyRule, scoreEfficiency, stepEfficiency, trajectoryEfficiency } from './efficiency.js';

describe('efficiency rule', () => {
  it('is 1 for an empty trajectory and min(1, R/n) otherwise', () => {
    expect(trajectoryEfficiency(0, 5)).toBe(1);
    expect(trajectoryEfficiency(3, 5)).toBe(1);
    expect(trajectoryEfficiency(10, 5)).toBe(0.5);
  });

  it('gives per-step scores whose mean is the trajectory efficiency', () => {
    for (const R of [0.5, 1, 2.5, 7, 30]) {
      for (const n of [1, 2, 5, 31]) {
        let sum = 0;
        for (let i = 0; i < n; i++) sum += stepEfficiency(i, R);
        expect(sum / n).toBeCloseTo(trajectoryEfficiency(n, R), 12);
      }
    }
  });

  it('uses the profile step budget by default and says why', () => {
    const math = getProfile('math');
    const t = trajectory(Array.from({ length: 6 }, () => ['think', { thought: 'x' }] as [string, Record<string, unknown>]));
    const col = scoreEfficiency(prepareRuleContext(t, math));
    expect([...col.scores]).toEqual([1, 1, 1, 1, 0, 0]);
    const rule = efficiencyRule(math.stepBudget);
    expect(rule.rationale(col.codes[4] ?? 0, -1, col.counts[4] ?? 0, (p) => p)).toBe('step 5 is beyond the reference 4');
    expect(rule.rationale(col.codes[0] ?? 0, -1, col.counts[0] ?? 0, (p) => p)).toBe('step 1 of a reference 4');
  });
});
