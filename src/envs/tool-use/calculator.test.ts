import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { InvalidActionError } from '../../core/errors.js';
import { calculate, CalculatorError, formatNumber, MAX_DEPTH } from './calculator.js';

describe('calculate', () => {
  it.each([
    ['2 + 3 * 4', 14],
    ['(2 + 3) * 4', 20],
    ['10 - 4 - 3', 3],
    ['64 / 4 / 2', 8],
    ['2 ^ 3 ^ 2', 512],
    ['2 ** 10', 1024],
    ['-2 ^ 2', -4],
    ['(-2) ^ 2', 4],
    ['2 ^ -1', 0.5],
    ['--3', 3],
    ['-(4 - 6) * +3', 6],
    ['17 % 5', 2],
    ['7 - 10 % 4 * 2', 3],
    ['.5 + 1.25', 1.75],
    ['1.5e3 / 3', 500],
    ['sqrt(16) + abs(-3)', 7],
    ['round(2.5)', 3],
    ['round(42.5 * 0.85, 2)', 36.13],
    ['round(1.005, 2)', 1.01],
    ['floor(-2.5) + ceil(2.1)', 0],
    ['min(4, 2, 8) + max(1, 9)', 11],
    ['abs(1921 - 1854)', 67],
    ['3 × 4 ÷ 2 − 1', 5],
    ['2 * pi', 2 * Math.PI],
  ])('%s = %d', (expression, expected) => {
    expect(calculate(expression)).toBeCloseTo(expected, 10);
  });

  it.each([
    ['1 + (2 * 3))', "calculator: unexpected token ')' at position 11"],
    ['(1 + 2', "calculator: missing ')' to close '(' at position 0 at position 6"],
    ['2 +', 'calculator: unexpected end of expression at position 3'],
    ['4 / (2 - 2)', 'calculator: division by zero at position 2'],
    ['5 % 0', 'calculator: remainder by zero at position 2'],
    ['2 $ 3', "calculator: unexpected character '$' at position 2"],
    ['', 'calculator: empty expression'],
    ['sqrt(-4)', 'calculator: sqrt of a negative number (-4) at position 0'],
    ['round(1, 2, 3)', 'calculator: round() takes 1 or 2 arguments, got 3 at position 0'],
    ['min()', 'calculator: min() takes at least 1 arguments, got 0 at position 0'],
    ['sqrt', "calculator: function 'sqrt' needs arguments in parentheses, e.g. sqrt(2) at position 0"],
    ['2(3)', "calculator: unexpected token '(' at position 1"],
    ['(-8) ^ 0.5', 'calculator: -8 ^ 0.5 is not a real number at position 5'],
    ['10 ^ 400', 'calculator: result is not a finite number (Infinity)'],
  ])('rejects %j with a clear message', (expression, message) => {
    expect(() => calculate(expression)).toThrow(message);
  });

  it.each([
    'process.exit(1)',
    'require("fs")',
    'constructor.constructor("return process")()',
    'globalThis',
    '1; process.exit(1)',
    'this',
    '`${1}`',
    'x = 1',
    '[1, 2]',
    '__proto__',
    'toString()',
  ])('rejects the injection attempt %j without executing anything', (expression) => {
    let error: unknown;
    try {
      calculate(expression);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(CalculatorError);
    expect(error).toBeInstanceOf(InvalidActionError);
    expect((error as Error).message).toMatch(/^calculator: (unknown (name|function)|unexpected character|unexpected token)/);
  });

  it('names unknown identifiers and lists the known ones', () => {
    expect(() => calculate('process.exit(1)')).toThrow("calculator: unknown name 'process' (known names: sqrt(), abs(), round(), floor(), ceil(), min(), max(), pi, e) at position 0");
  });

  it('bounds input length and nesting depth', () => {
    expect(() => calculate('1+'.repeat(300) + '1')).toThrow(/too long/);
    expect(() => calculate('('.repeat(MAX_DEPTH + 1) + '1' + ')'.repeat(MAX_DEPTH + 1))).toThrow(/nested too deeply/);
    expect(() => calculate('-'.repeat(MAX_DEPTH + 1) + '1')).toThrow(/nested too deeply/);
    expect(calculate('('.repeat(20) + '1' + ')'.repeat(20))).toBe(1);
  });

  it('never uses eval or Function', () => {
    const source = readFileSync(fileURLToPath(new URL('./calculator.ts', import.meta.url)), 'utf8');
    expect(source).not.toMatch(/\beval\s*\(|new Function|\bFunction\s*\(/);
  });
});

describe('formatNumber', () => {
  it('prints integers exactly and removes floating-point noise', () => {
    expect(formatNumber(0.1 + 0.2)).toBe('0.3');
    expect(formatNumber(204300)).toBe('204300');
    expect(formatNumber(-0)).toBe('0');
    expect(formatNumber(1 / 3)).toBe('0.333333333333');
  });
});
