import { z } from 'zod';
import { SchemaError } from '../../core/errors.js';
import { formatZodIssues } from '../../core/trajectory.js';
import type { ScoreCalibration } from '../types.js';

/**
 * Isotonic (monotone non-decreasing) calibration of automatic scores onto the human scale.
 *
 * Fit: pool-adjacent-violators (PAV) on the points sorted by automatic score; points with equal
 * automatic score are pooled first (weighted mean of their human scores), so the fit is a function.
 * Apply: linear interpolation between the fitted knots, clamped to the first/last knot's value outside
 * the fitted range (no extrapolation: an automatic score beyond anything seen maps to the nearest
 * human level seen).
 */

/** One (automatic, human) observation for the fit; `weight` defaults to 1. */
export interface IsotonicPoint {
  x: number;
  y: number;
  weight?: number;
}

/** What the calibration was fitted on, stored with it. */
export interface CalibrationFitInfo {
  /** `step` (step reward scores vs step labels) or `trajectory` (reward totals vs trajectory labels). */
  level?: 'step' | 'trajectory';
  /** Number of (automatic, human) pairs fitted. */
  n?: number;
  /** The annotators' scale that labels were mapped from onto [0, 1], when one was given. */
  labelRange?: [number, number];
}

const finite = z.number().refine(Number.isFinite, { message: 'expected a finite number' });

/** The JSON form of an {@link IsotonicCalibration} (`toJSON()` output, `fromJSON()` input). */
export const IsotonicCalibrationJsonSchema = z
  .object({
    kind: z.literal('isotonic'),
    version: z.literal(1),
    increasing: z.literal(true),
    /** Knot positions on the automatic scale, strictly increasing. */
    x: z.array(finite).min(1),
    /** Fitted human-scale values at the knots, non-decreasing. */
    y: z.array(finite).min(1),
    fit: z
      .object({
        level: z.enum(['step', 'trajectory']).optional(),
        n: z.number().int().nonnegative().optional(),
        labelRange: z.tuple([finite, finite]).optional(),
      })
      .strict()
      .default({}),
  })
  .strict()
  .superRefine((v, ctx) => {
    if (v.x.length !== v.y.length) {
      ctx.addIssue({ code: 'custom', path: ['y'], message: `x has ${v.x.length} knots but y has ${v.y.length}` });
      return;
    }
    for (let i = 1; i < v.x.length; i++) {
      if (!((v.x[i] as number) > (v.x[i - 1] as number))) ctx.addIssue({ code: 'custom', path: ['x', i], message: 'knots must be strictly increasing' });
      if ((v.y[i] as number) < (v.y[i - 1] as number)) ctx.addIssue({ code: 'custom', path: ['y', i], message: 'fitted values must be non-decreasing' });
    }
  });

/** The JSON form of an isotonic calibration. */
export type IsotonicCalibrationJson = z.output<typeof IsotonicCalibrationJsonSchema>;

/**
 * A fitted isotonic map, implementing {@link ScoreCalibration}. Build one with {@link fitIsotonic} or
 * {@link IsotonicCalibration.fromJSON}.
 *
 * @example
 * ```ts
 * const cal = fitIsotonic(pairs.map((p) => ({ x: p.auto, y: p.human })));
 * cal.apply(0.42); // on the human scale
 * writeFileSync('calibration.json', JSON.stringify(cal));
 * ```
 */
export class IsotonicCalibration implements ScoreCalibration {
  readonly kind = 'isotonic';
  /** Knot positions (strictly increasing). */
  readonly x: readonly number[];
  /** Fitted values at the knots (non-decreasing). */
  readonly y: readonly number[];
  /** What it was fitted on. */
  readonly fit: CalibrationFitInfo;

  /** Prefer {@link fitIsotonic} or {@link IsotonicCalibration.fromJSON}; this trusts its arguments. */
  constructor(x: readonly number[], y: readonly number[], fit: CalibrationFitInfo = {}) {
    if (x.length === 0 || x.length !== y.length) throw new RangeError(`IsotonicCalibration: need equal, non-empty knot lists (x ${x.length}, y ${y.length})`);
    this.x = [...x];
    this.y = [...y];
    this.fit = { ...fit };
  }

  /** Maps an automatic score to the human scale; `NaN` stays `NaN`. */
  apply(score: number): number {
    if (Number.isNaN(score)) return Number.NaN;
    const { x, y } = this;
    const last = x.length - 1;
    if (score <= (x[0] as number)) return y[0] as number;
    if (score >= (x[last] as number)) return y[last] as number;
    // Largest i with x[i] <= score (binary search); then interpolate on [x[i], x[i+1]].
    let lo = 0;
    let hi = last;
    while (hi - lo > 1) {
      const mid = (lo + hi) >> 1;
      if ((x[mid] as number) <= score) lo = mid;
      else hi = mid;
    }
    const x0 = x[lo] as number;
    const x1 = x[hi] as number;
    const y0 = y[lo] as number;
    const y1 = y[hi] as number;
    return y0 + ((score - x0) / (x1 - x0)) * (y1 - y0);
  }

  /** Everything needed to rebuild the map ({@link IsotonicCalibration.fromJSON}); no timestamps, so equal fits serialise equally. */
  toJSON(): IsotonicCalibrationJson & Record<string, unknown> {
    const fit: IsotonicCalibrationJson['fit'] = {};
    if (this.fit.level !== undefined) fit.level = this.fit.level;
    if (this.fit.n !== undefined) fit.n = this.fit.n;
    if (this.fit.labelRange !== undefined) fit.labelRange = [this.fit.labelRange[0], this.fit.labelRange[1]];
    return { kind: 'isotonic', version: 1, increasing: true, x: [...this.x], y: [...this.y], fit };
  }

  /** Rebuilds a calibration from its JSON form; `place` names the source in errors. Throws {@link SchemaError}. */
  static fromJSON(value: unknown, place = '<calibration>'): IsotonicCalibration {
    const r = IsotonicCalibrationJsonSchema.safeParse(value);
    if (!r.success) {
      const issues = formatZodIssues(r.error, place);
      throw new SchemaError(`invalid calibration:\n${issues.join('\n')}`, issues);
    }
    const fit: CalibrationFitInfo = {};
    if (r.data.fit.level !== undefined) fit.level = r.data.fit.level;
    if (r.data.fit.n !== undefined) fit.n = r.data.fit.n;
    if (r.data.fit.labelRange !== undefined) fit.labelRange = r.data.fit.labelRange;
    return new IsotonicCalibration(r.data.x, r.data.y, fit);
  }
}

/**
 * Fits a non-decreasing step function to the points by pool-adjacent-violators, then keeps each pooled
 * block's first and last automatic score as knots (interpolation is flat inside a block and linear
 * between blocks).
 */
export function fitIsotonic(points: readonly IsotonicPoint[], fit: CalibrationFitInfo = {}): IsotonicCalibration {
  if (points.length === 0) throw new RangeError('fitIsotonic: no points');
  for (const [i, p] of points.entries()) {
    const w = p.weight ?? 1;
    if (!Number.isFinite(p.x) || !Number.isFinite(p.y) || !(w > 0) || !Number.isFinite(w)) {
      throw new RangeError(`fitIsotonic: point ${i} is not finite with positive weight: ${JSON.stringify(p)}`);
    }
  }
  const sorted = [...points].sort((a, b) => a.x - b.x);
  // Pool equal x first: the fit must be a function of the automatic score.
  const pooled: { x: number; sw: number; swy: number }[] = [];
  for (const p of sorted) {
    const w = p.weight ?? 1;
    const top = pooled[pooled.length - 1];
    if (top && top.x === p.x) {
      top.sw += w;
      top.swy += w * p.y;
    } else pooled.push({ x: p.x, sw: w, swy: w * p.y });
  }
  interface Block {
    xMin: number;
    xMax: number;
    sw: number;
    swy: number;
  }
  const blocks: Block[] = [];
  for (const p of pooled) {
    blocks.push({ xMin: p.x, xMax: p.x, sw: p.sw, swy: p.swy });
    // Merge backwards while the last two blocks violate monotonicity.
    while (blocks.length >= 2) {
      const b = blocks[blocks.length - 1] as Block;
      const a = blocks[blocks.length - 2] as Block;
      if (a.swy / a.sw <= b.swy / b.sw) break;
      blocks.pop();
      a.xMax = b.xMax;
      a.sw += b.sw;
      a.swy += b.swy;
    }
  }
  const x: number[] = [];
  const y: number[] = [];
  for (const b of blocks) {
    const v = b.swy / b.sw;
    x.push(b.xMin);
    y.push(v);
    if (b.xMax > b.xMin) {
      x.push(b.xMax);
      y.push(v);
    }
  }
  // Floating-point means of merged blocks can come out a ulp below their predecessor; keep y monotone.
  for (let i = 1; i < y.length; i++) if ((y[i] as number) < (y[i - 1] as number)) y[i] = y[i - 1] as number;
  return new IsotonicCalibration(x, y, { ...fit, n: fit.n ?? points.length });
}
