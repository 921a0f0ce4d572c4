/**
 * Answer checking for `gymflow/tool-use-v0`.
 *
 * - Numeric answers: the submission must contain exactly one number (thousands separators, a unit or
 *   currency word around it are fine: `48,200`, `36.13 crowns`); it is correct when
 *   `|given − expected| ≤ max(0.01, 1e-6 × |expected|)`. The 0.01 absolute part accepts money rounded to
 *   cents; the relative part only matters for very large amounts.
 * - String answers: compared after {@link normalizeAnswer} (case, spacing, quotes, final period, a
 *   leading "the", a trailing "(kind)" and `&` vs `and` do not matter).
 */

/** The expected answer of a task. */
export type ExpectedAnswer = { type: 'number'; value: number } | { type: 'string'; value: string };

/** Absolute tolerance for numeric answers. */
export const ABS_TOLERANCE = 0.01;
/** Relative tolerance for numeric answers. */
export const REL_TOLERANCE = 1e-6;

/** Normalises a string answer for comparison. */
export function normalizeAnswer(text: string): string {
  return text
    .normalize('NFKC')
    .toLowerCase()
    .replace(/&/g, ' and ')
    .replace(/^[\s"'`]+|[\s"'`.!]+$/g, '')
    .replace(/\s*\([^)]*\)$/, '')
    .replace(/^the\s+/, '')
    .replace(/\s+/g, ' ')
    .trim();
}

/**
 * The single number in an answer, or `undefined` when there is none or more than one. Digits glued to
 * letters (`km2`) do not count as numbers.
 */
export function extractNumber(text: string): number | undefined {
  const cleaned = text.normalize('NFKC').replace(/\u2212/g, '-').replace(/(\d),(?=\d{3}(?!\d))/g, '$1');
  const matches = cleaned.match(/(?<![\p{L}\d.])[-+]?(?:\d+(?:\.\d+)?|\.\d+)(?:e[-+]?\d+)?(?![\p{L}\d])/giu) ?? [];
  if (matches.length !== 1) return undefined;
  const value = Number(matches[0]);
  return Number.isFinite(value) ? value : undefined;
}

/** Whether `given` answers `expected` under the rules above. */
export function checkAnswer(given: string, expected: ExpectedAnswer): boolean {
  if (expected.type === 'string') return normalizeAnswer(given) === normalizeAnswer(expected.value);
  const value = extractNumber(given);
  if (value === undefined) return false;
  return Math.abs(value - expected.value) <= Math.max(ABS_TOLERANCE, REL_TOLERANCE * Math.abs(expected.value));
}

/** The expected answer as text (for `info.expected`). */
export function formatExpected(expected: ExpectedAnswer): string {
  if (expected.type === 'string') return expected.value;
  return String(Number(expected.value.toPrecision(12)));
}
