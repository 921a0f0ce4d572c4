import { Fraction } from './fraction.js';

/**
 * Answer parsing and grading for `gymflow/text-math-v0`.
 *
 * Canonical format (after trimming surrounding whitespace): an integer with no sign other than a
 * leading `-`, no leading zeros and no separators (`42`, `-7`, `0`), or a reduced fraction with a
 * positive denominator greater than 1 (`3/4`, `-5/2`).
 *
 * Everything else that still denotes a number exactly is parsed — never with `eval` — so a
 * numerically right answer in another form earns partial credit: a leading `+` (`+42`), leading zeros
 * (`042`), `-0`, thousands separators (`1,000`), decimals (`0.75`, `42.0`, `.5`), unreduced or
 * signed-denominator fractions (`6/8`, `3/-4`, `4/1`), spaces inside (`3 / 4`), mixed numbers (`1 1/2`)
 * and the Unicode minus sign (`−7`). Decimals are read exactly, so `0.333` is not `1/3`.
 */

/** Reward for a numerically right answer that is not in canonical form. */
export const NON_CANONICAL_CREDIT = 0.5;

/** Answers longer than this are not parsed (they would only be garbage or an attack on BigInt). */
export const MAX_ANSWER_LENGTH = 64;

/** A parsed answer: its exact value and whether it was written canonically. */
export interface ParsedAnswer {
  value: Fraction;
  canonical: boolean;
}

/** How a submitted answer was judged. */
export interface Grade {
  /** 1 (right and canonical), {@link NON_CANONICAL_CREDIT} (right, other form) or 0. */
  reward: number;
  verdict: 'correct' | 'non_canonical' | 'wrong' | 'unparseable';
  /** The submitted value in canonical form, when it parsed. */
  parsed?: string;
}

const CANONICAL_INT = /^-?(0|[1-9]\d*)$/;
const CANONICAL_FRAC = /^-?[1-9]\d*\/[1-9]\d*$/;
const SIGN = '[+-]?';
const INT_WITH_SEPARATORS = new RegExp(`^${SIGN}\\d{1,3}(,\\d{3})+$`);
const DECIMAL = new RegExp(`^${SIGN}(\\d+\\.?\\d*|\\.\\d+)$`);
const FRACTION = new RegExp(`^(${SIGN}\\d+)/(${SIGN}\\d+)$`);
const MIXED = /^([+-]?)(\d+)\s+(\d+)\s*\/\s*(\d+)$/;

function parseSigned(text: string): bigint {
  return BigInt(text.startsWith('+') ? text.slice(1) : text);
}

function parseDecimal(text: string): Fraction {
  const negative = text.startsWith('-');
  const body = text.replace(/^[+-]/, '');
  const [whole = '', frac = ''] = body.split('.');
  const digits = `${whole}${frac}` || '0';
  const value = Fraction.of(BigInt(digits), 10n ** BigInt(frac.length));
  return negative ? value.neg() : value;
}

/**
 * Parses an answer string. `undefined` when it does not denote a number in any accepted form.
 *
 * @example
 * ```ts
 * parseAnswer('3/4');   // { value: 3/4, canonical: true }
 * parseAnswer(' 0.75'); // { value: 3/4, canonical: false }
 * parseAnswer('abc');   // undefined
 * ```
 */
export function parseAnswer(raw: string): ParsedAnswer | undefined {
  const trimmed = raw.trim();
  if (trimmed.length === 0 || trimmed.length > MAX_ANSWER_LENGTH) return undefined;

  // Canonical forms are checked on the text as written (ASCII only), lenient forms after normalising.
  if (CANONICAL_INT.test(trimmed) && trimmed !== '-0') return { value: Fraction.int(BigInt(trimmed)), canonical: true };
  if (CANONICAL_FRAC.test(trimmed)) {
    const [n = '', d = ''] = trimmed.split('/');
    const value = Fraction.of(BigInt(n), BigInt(d));
    // `4/2` and `6/8` parse but are not reduced; a reduced fraction round-trips to the same text.
    return { value, canonical: !value.isInteger() && value.toString() === trimmed };
  }

  const text = trimmed.normalize('NFKC').replace(/\u2212/g, '-');

  const mixed = MIXED.exec(text);
  if (mixed) {
    const [, sign, whole = '0', n = '0', d = '0'] = mixed;
    if (BigInt(d) === 0n) return undefined;
    const value = Fraction.int(BigInt(whole)).add(Fraction.of(BigInt(n), BigInt(d)));
    return { value: sign === '-' ? value.neg() : value, canonical: false };
  }

  const compact = text.replace(/\s+/g, '');
  if (INT_WITH_SEPARATORS.test(compact)) {
    return { value: Fraction.int(parseSigned(compact.replace(/,/g, ''))), canonical: false };
  }
  if (DECIMAL.test(compact)) return { value: parseDecimal(compact), canonical: false };
  const fraction = FRACTION.exec(compact);
  if (fraction) {
    const [, n = '0', d = '0'] = fraction;
    const den = parseSigned(d);
    if (den === 0n) return undefined;
    return { value: Fraction.of(parseSigned(n), den), canonical: false };
  }
  return undefined;
}

/**
 * Grades a submitted answer against the exact expected value: 1 when it is right and canonical,
 * {@link NON_CANONICAL_CREDIT} when it is right in another accepted form, 0 otherwise.
 */
export function gradeAnswer(raw: string, expected: Fraction): Grade {
  const parsed = parseAnswer(raw);
  if (!parsed) return { reward: 0, verdict: 'unparseable' };
  const text = parsed.value.toString();
  if (!parsed.value.equals(expected)) return { reward: 0, verdict: 'wrong', parsed: text };
  return parsed.canonical
    ? { reward: 1, verdict: 'correct', parsed: text }
    : { reward: NON_CANONICAL_CREDIT, verdict: 'non_canonical', parsed: text };
}
