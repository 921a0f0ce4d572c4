import { describe, expect, it } from 'vitest';
import { getProfile } from '../core/profiles/index.js';
import { allRubrics } from './rubric-list.js';

describe('allRubrics', () => {
  it("lists a profile's rubrics layer by layer: the outcome, the four rules, the judge's, with the profile's weights", () => {
    const coding = getProfile('coding');
    const rows = allRubrics(coding);
    expect(rows.map((r) => [r.layer, r.name])).toEqual([
      ['env', 'outcome'],
      ['rules', 'redundancy'],
      ['rules', 'regression'],
      ['rules', 'informationUse'],
      ['rules', 'efficiency'],
      ['judge', 'goalProgress'],
      ['judge', 'toolSelection'],
      ['judge', 'parameterCorrectness'],
    ]);
    for (const r of rows) {
      expect(r.weight, r.name).toBe(coding.rubricWeights[r.name] ?? 0);
      expect(r.description.length, r.name).toBeGreaterThan(20);
    }
    expect(rows[0]).toMatchObject({ level: 'trajectory' });
    expect(rows.find((r) => r.name === 'goalProgress')?.scale).toBeDefined();
  });
});
