import { describe, expect, it } from 'vitest';
import { Rng } from '../../core/rng.js';
import { SchemaError } from '../../core/errors.js';
import { fitIsotonic, IsotonicCalibration } from './isotonic.js';

describe('isotonic calibration', () => {
  it('pools adjacent violators (hand-computed)', () => {
    // y = 1, 3, 2, 4, 3.5 at x = 1..5. PAV: (3, 2) violate → pooled 2.5 over x ∈ [2, 3];
    // (4, 3.5) violate → pooled 3.75 over x ∈ [4, 5]. Knots keep each block's ends.
    const cal = fitIsotonic([1, 3, 2, 4, 3.5].map((y, i) => ({ x: i + 1, y })));
    expect(cal.x).toEqual([1, 2, 3, 4, 5]);
    expect(cal.y).toEqual([1, 2.5, 2.5, 3.75, 3.75]);
    expect(cal.apply(1.5)).toBe(1.75); // halfway between 1 and 2.5
    expect(cal.apply(2.7)).toBe(2.5); // flat inside a block
    expect(cal.apply(3.5)).toBe(3.125); // halfway between 2.5 and 3.75
    expect(cal.apply(-10)).toBe(1); // clamped below
    expect(cal.apply(10)).toBe(3.75); // clamped above
    expect(cal.apply(Number.NaN)).toBeNaN();
    expect(cal.fit.n).toBe(5);
  });

  it('pools equal automatic scores before PAV, weighting by count', () => {
    // x = 0 has labels 0 and 1 (mean 0.5); x = 1 has label 0.2 < 0.5, so the blocks merge:
    // (0.5·2 + 0.2·1) / 3 = 0.4 over [0, 1].
    const cal = fitIsotonic([
      { x: 0, y: 0 },
      { x: 0, y: 1 },
      { x: 1, y: 0.2 },
      { x: 2, y: 0.9 },
    ]);
    expect(cal.x).toEqual([0, 1, 2]);
    expect(cal.y[0]).toBeCloseTo(0.4, 12);
    expect(cal.y[1]).toBeCloseTo(0.4, 12);
    expect(cal.y[2]).toBe(0.9);
  });

  it('recovers a known monotone relation (human = sqrt(auto) + noise)', () => {
    const rng = new Rng(123);
    const points = Array.from({ length: 2000 }, () => {
      const x = rng.next();
      // Noise: uniform in ±0.05 (mean 0).
      return { x, y: Math.sqrt(x) + (rng.next() - 0.5) * 0.1 };
    });
    const cal = fitIsotonic(points);
    let worst = 0;
    for (let x = 0.05; x <= 0.95; x += 0.01) worst = Math.max(worst, Math.abs(cal.apply(x) - Math.sqrt(x)));
    expect(worst).toBeLessThan(0.04);
    // Monotone everywhere, including between knots.
    let prev = -Infinity;
    for (let x = -0.1; x <= 1.1; x += 0.001) {
      const v = cal.apply(x);
      expect(v).toBeGreaterThanOrEqual(prev);
      prev = v;
    }
  });

  it('round-trips through JSON and rejects malformed JSON with paths', () => {
    const cal = fitIsotonic([0.1, 0.5, 0.4, 0.9].map((y, i) => ({ x: i / 3, y })), { level: 'step' });
    const json = JSON.parse(JSON.stringify(cal)) as unknown;
    expect(json).toEqual({ kind: 'isotonic', version: 1, increasing: true, x: cal.x, y: cal.y, fit: { level: 'step', n: 4 } });
    const back = IsotonicCalibration.fromJSON(json);
    for (const s of [-1, 0, 0.2, 0.5, 0.77, 2]) expect(back.apply(s)).toBe(cal.apply(s));

    const bad = { kind: 'isotonic', version: 1, increasing: true, x: [0, 0.5, 0.4], y: [0, 1, 0.5] };
    try {
      IsotonicCalibration.fromJSON(bad, 'cal.json');
      expect.fail('should throw');
    } catch (err) {
      expect(err).toBeInstanceOf(SchemaError);
      expect((err as SchemaError).issues).toEqual([
        'cal.json $.x[2]: knots must be strictly increasing',
        'cal.json $.y[2]: fitted values must be non-decreasing',
      ]);
    }
    expect(() => IsotonicCalibration.fromJSON({ kind: 'linear' }, 'c.json')).toThrow(/c\.json \$\.kind/);
  });

  it('refuses empty or non-finite input', () => {
    expect(() => fitIsotonic([])).toThrow(/no points/);
    expect(() => fitIsotonic([{ x: Number.NaN, y: 1 }])).toThrow(/point 0/);
  });
});
