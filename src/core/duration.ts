/**
 * Durations written with their unit — `250ms`, `90s`, `30m`, `6h`, `2d`, `1.5h` — as the pipeline
 * configuration (Temporal's duration strings) and the CLI's options take them. Pure: workflows reach it
 * through `src/loop/config.ts`.
 */

/** Milliseconds per unit of a duration string. */
export const DURATION_UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** A duration unit: `ms`, `s`, `m`, `h` or `d`. */
export type DurationUnit = keyof typeof DURATION_UNIT_MS;

/** A duration string: a non-negative decimal number and its unit, optionally a space between (`90s`, `1.5 h`). */
export const DURATION_PATTERN = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)$/;

/**
 * Milliseconds of a duration string (`90s`, `2m`, `1.5h`); `NaN` when it is not one (no unit, another
 * unit, surrounding spaces).
 *
 * @example durationMs('2m') // 120000
 */
export function durationMs(value: string): number {
  const m = DURATION_PATTERN.exec(value);
  if (m === null) return Number.NaN;
  return Number(m[1]) * DURATION_UNIT_MS[m[2] as DurationUnit];
}
