import type { Rng } from '../../core/rng.js';
import { ATTRIBUTES, type AttributeMeta, type AttributeValue, type WorldEntity } from './world.js';

/**
 * Domain randomisation for `gymflow/tool-use-v0` (env option `randomizeValues`): a copy of the world whose
 * numeric facts — years, populations, employees, areas, elevations, prices, weights — are redrawn, while
 * names, descriptions, links and categories stay. A policy trained on such episodes cannot answer from a
 * memorised fact table (the held-out split asks about the same entities): the numbers it needs exist only
 * in this episode's tool results, so it must read and copy them. The expert still solves every task, since
 * it works only through the tools.
 *
 * How a value is redrawn, by {@link AttributeMeta}:
 * - `year`: uniform integer in [{@link YEAR_RANGE}];
 * - amounts: the original value times a factor uniform in [{@link FACTOR_RANGE}), kept at the original's
 *   granularity so it prints the same way — `48200` stays a multiple of 100, `129.99` keeps 2 decimals,
 *   `2.4` keeps 1 — and never below one unit of that granularity.
 */

/** Years are redrawn uniformly from this range (both ends included). */
export const YEAR_RANGE: readonly [number, number] = [1000, 2020];
/** Amounts are the original times a factor from this range. */
export const FACTOR_RANGE: readonly [number, number] = [0.25, 1.75];

/** Decimal places of `value` as printed by `String` (0 for integers). */
function decimalsOf(value: number): number {
  const text = String(value);
  const dot = text.indexOf('.');
  return dot < 0 ? 0 : text.length - dot - 1;
}

/** The original's granularity: 10^k for the largest k ≤ 3 such that an integer value is a multiple of it. */
function integerStep(value: number): number {
  let step = 1;
  while (step < 1000 && value % (step * 10) === 0) step *= 10;
  return step;
}

/** A redrawn value for one numeric attribute (see the module documentation). */
export function redrawValue(value: number, meta: AttributeMeta, rng: Rng): number {
  if (meta.type === 'year') return rng.int(YEAR_RANGE[0], YEAR_RANGE[1]);
  const factor = FACTOR_RANGE[0] + (FACTOR_RANGE[1] - FACTOR_RANGE[0]) * rng.next();
  if (Number.isInteger(value) && meta.decimals === undefined) {
    const step = integerStep(value);
    return Math.max(step, Math.round((value * factor) / step) * step);
  }
  const decimals = meta.decimals ?? decimalsOf(value);
  const unit = 10 ** -decimals;
  return Number(Math.max(unit, value * factor).toFixed(decimals));
}

/** A copy of `entities` with every numeric attribute redrawn from `rng` (same order, same names). */
export function randomizeEntities(entities: readonly WorldEntity[], rng: Rng): WorldEntity[] {
  return entities.map((entity) => {
    const attributes: Record<string, AttributeValue> = {};
    for (const [name, value] of Object.entries(entity.attributes)) {
      const meta = ATTRIBUTES[name];
      const numeric = meta !== undefined && (meta.type === 'number' || meta.type === 'year');
      attributes[name] = numeric && typeof value === 'number' ? redrawValue(value, meta, rng) : value;
    }
    return { ...entity, attributes };
  });
}
