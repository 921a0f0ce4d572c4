import { describe, expect, it } from 'vitest';
import { expectClose } from './__fixtures__/expect-close.js';
import { rmsCalibrationError } from './calibration-error.js';

const answers = (pairs: readonly (readonly [number, boolean])[]): { confidence: number; correct: boolean }[] => pairs.map(([confidence, correct]) => ({ confidence, correct }));

describe('rmsCalibrationError', () => {
  it('is |confidence − accuracy| for one bin', () => {
    const r = rmsCalibrationError(answers([[0.9, false], [0.9, true]]));
    expectClose(r.rms, 0.4, 1e-14);
    expect(r).toMatchObject({ n: 2, binSize: 100, bins: [{ n: 2, accuracy: 0.5 }] });
  });

  it('is 0 for perfectly calibrated bins and 1 for certain and always wrong', () => {
    const calibrated = answers([...Array.from({ length: 7 }, () => [0.7, true] as const), ...Array.from({ length: 3 }, () => [0.7, false] as const)]);
    expect(rmsCalibrationError(calibrated, { binSize: 10 }).rms).toBeCloseTo(0, 14);
    expect(rmsCalibrationError(answers([[1, false], [1, false]])).rms).toBe(1);
  });

  it('sorts by confidence, cuts bins of β with the remainder in the last, and weights each by its size', () => {
    // Hand-computed. Sorted: 0.1 T, 0.2 F | 0.5 T, 0.6 F, 0.95 T (5 // 2 = 2 bins, the last of 3).
    // Bin 1: confidence 0.15, accuracy 1/2, weight 2/5 → 0.4 · 0.35² = 0.049.
    // Bin 2: confidence 2.05/3, accuracy 2/3, weight 3/5 → 0.6 · (1/60)² = 1/6000.
    const r = rmsCalibrationError(answers([[0.95, true], [0.2, false], [0.6, false], [0.1, true], [0.5, true]]), { binSize: 2 });
    expectClose(r.rms, Math.sqrt(0.049 + 1 / 6000), 1e-12);
    expect(r.bins.map((b) => b.n)).toEqual([2, 3]);
    expectClose(r.bins[0]?.confidence as number, 0.15, 1e-14);
    expectClose(r.bins[1]?.accuracy as number, 2 / 3, 1e-14);
  });

  it("reproduces HLE's script with dropLastBin: the last bin is left out of the sum, not out of n", () => {
    const data = answers([[0.95, true], [0.2, false], [0.6, false], [0.1, true], [0.5, true]]);
    expectClose(rmsCalibrationError(data, { binSize: 2, dropLastBin: true }).rms, Math.sqrt(0.049), 1e-12);
    // One bin (n < 2β): the script sums nothing.
    expect(rmsCalibrationError(data, { dropLastBin: true }).rms).toBe(0);
  });

  it('uses one bin of every answer when there are fewer than β', () => {
    const r = rmsCalibrationError(answers([[0.2, true], [0.4, true], [0.6, false]]));
    expect(r.bins).toHaveLength(1);
    expectClose(r.rms, Math.abs(0.4 - 2 / 3), 1e-12);
  });

  it('keeps tied confidences in input order, so equal inputs give equal bins', () => {
    const r = rmsCalibrationError(answers([[0.5, true], [0.5, false], [0.5, false], [0.5, true]]), { binSize: 2 });
    expect(r.bins.map((b) => b.accuracy)).toEqual([0.5, 0.5]);
    const s = rmsCalibrationError(answers([[0.5, true], [0.5, true], [0.5, false], [0.5, false]]), { binSize: 2 });
    expect(s.bins.map((b) => b.accuracy)).toEqual([1, 0]);
  });

  it('refuses no answers, confidences outside [0, 1] and bad bin sizes, naming the problem', () => {
    expect(() => rmsCalibrationError([])).toThrow(/no answers/);
    expect(() => rmsCalibrationError(answers([[0.5, true], [85, true]]))).toThrow(/answer 1: confidence must be a number in \[0, 1\], got 85/);
    expect(() => rmsCalibrationError(answers([[Number.NaN, true]]))).toThrow(/got NaN/);
    expect(() => rmsCalibrationError(answers([[0.5, true]]), { binSize: 0 })).toThrow(/binSize must be a positive integer, got 0/);
  });
});
