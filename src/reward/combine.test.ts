import { describe, expect, it } from 'vitest';
import { ConfigError } from '../core/errors.js';
import { calibrationLevel, combine, type CombineColumn } from './combine.js';
import type { ScoreCalibration } from './types.js';

const NaN_ = Number.NaN;

function col(rubric: string, weight: number, scores: number[], layer: CombineColumn['layer'] = 'rules'): CombineColumn {
  return { rubric, layer, weight, scores: Float64Array.from(scores) };
}

function linear(a: number, b: number, extra: Partial<ScoreCalibration> = {}): ScoreCalibration {
  return { kind: 'linear', apply: (x) => a + b * x, toJSON: () => ({ a, b }), ...extra };
}

describe('combine', () => {
  it('weights present rubrics per step and leaves absent ones out', () => {
    const r = combine({
      steps: 3,
      columns: [col('redundancy', 1, [1, 0, NaN_]), col('regression', 3, [NaN_, 1, NaN_])],
      outcome: { score: 0, weight: 0 },
      efficiency: { score: 1, weight: 0 },
    });
    expect([...r.stepScores]).toEqual([1, 0.75, 1]); // step 2: nothing applies → 1
    expect(r.effectiveWeights[0]?.[1]).toBe(0.25);
    expect(r.effectiveWeights[1]?.[1]).toBe(0.75);
    expect(r.effectiveWeights[1]?.[0]).toBe(0);
    expect(r.rubricScores).toEqual({ redundancy: 0.5, regression: 1 });
    // process = (1·0.5 + 3·1)/4
    expect(r.process).toBe(0.875);
    expect(r.total).toBe(0.875);
  });

  it('keeps each rubric at its profile weight in the total, however many steps it covers', () => {
    const many = combine({
      steps: 4,
      columns: [col('redundancy', 1, [1, 1, 1, 1]), col('regression', 1, [NaN_, NaN_, NaN_, 0])],
      outcome: { score: 1, weight: 2 },
      efficiency: { score: 1, weight: 0 },
    });
    expect(many.total).toBe((2 + 1 + 0) / 4);
    expect(many.layers).toEqual({ env: 0.5, rules: 0.25 });
  });

  it('falls back to the outcome when no weighted rubric is present', () => {
    const r = combine({ steps: 2, columns: [col('goalProgress', 1, [NaN_, NaN_], 'judge')], outcome: { score: 0.3, weight: 0 }, efficiency: { score: 1, weight: 0 } });
    expect(r.total).toBe(0.3);
    expect(r.process).toBe(1);
    expect(r.layers).toEqual({ env: 0.3 });
  });

  it('splits the total into layers that add up to it', () => {
    const r = combine({
      steps: 2,
      columns: [col('redundancy', 0.1, [1, 0]), col('efficiency', 0.2, [1, 0.5]), col('goalProgress', 0.3, [0.2, 0.9], 'judge')],
      outcome: { score: 0.6, weight: 0.4 },
      efficiency: { score: 0.75, weight: 0.2 },
    });
    expect(r.rubricScores['efficiency']).toBe(0.75);
    const sum = Object.values(r.layers).reduce((a, b) => a + b, 0);
    expect(sum).toBeCloseTo(r.total, 12);
    expect(Object.keys(r.layers).sort()).toEqual(['env', 'judge', 'rules']);
  });

  it('calibrates the total at trajectory level, clamped, and records the adjustment', () => {
    const r = combine({ steps: 1, columns: [col('redundancy', 1, [1])], outcome: { score: 1, weight: 1 }, efficiency: { score: 1, weight: 0 }, calibration: linear(0.5, 1) });
    expect(r.rawTotal).toBe(1);
    expect(r.total).toBe(1);
    expect(r.layers['human']).toBe(0);
    expect([...r.stepScores]).toEqual([1]);
  });

  it('calibrates step scores when the calibration was fitted on steps', () => {
    const stepCal = linear(0, 0.5, { level: 'step' });
    const r = combine({ steps: 2, columns: [col('redundancy', 1, [1, 0])], outcome: { score: 1, weight: 1 }, efficiency: { score: 1, weight: 0 }, calibration: stepCal });
    expect([...r.stepScores]).toEqual([0.5, 0]);
    expect([...r.rawStepScores]).toEqual([1, 0]);
    expect(r.total).toBe(0.75);
    expect(r.layers['human']).toBeUndefined();
    expect(r.calibratedLevel).toBe('step');
  });

  it('reads the level of a fitted calibration from its JSON', () => {
    expect(calibrationLevel({ kind: 'isotonic', apply: (x) => x, toJSON: () => ({ fit: { level: 'step' } }) })).toBe('step');
    expect(calibrationLevel({ kind: 'isotonic', apply: (x) => x, toJSON: () => ({}) })).toBe('trajectory');
  });

  it('rejects a calibration that returns a non-finite number', () => {
    expect(() =>
      combine({ steps: 0, columns: [], outcome: { score: 1, weight: 1 }, efficiency: { score: 1, weight: 0 }, calibration: linear(Number.NaN, 1) }),
    ).toThrow(ConfigError);
  });
});
