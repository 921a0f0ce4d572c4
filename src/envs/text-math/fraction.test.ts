import { describe, expect, it } from 'vitest';
import { Fraction } from './fraction.js';

describe('Fraction', () => {
  it('reduces and normalises the sign', () => {
    expect(Fraction.of(6, 8).toString()).toBe('3/4');
    expect(Fraction.of(3, -4).toString()).toBe('-3/4');
    expect(Fraction.of(-14, 2).toString()).toBe('-7');
    expect(Fraction.of(0, 5).toString()).toBe('0');
  });

  it('does exact arithmetic', () => {
    const tenth = Fraction.of(1, 10);
    expect(tenth.add(Fraction.of(2, 10)).equals(Fraction.of(3, 10))).toBe(true);
    expect(Fraction.of(1, 2).sub(Fraction.of(3, 4)).toString()).toBe('-1/4');
    expect(Fraction.of(2, 3).mul(Fraction.of(9, 4)).toString()).toBe('3/2');
    expect(Fraction.of(2, 3).div(Fraction.of(4, 9)).toString()).toBe('3/2');
  });

  it('rejects zero denominators and unsafe numbers', () => {
    expect(() => Fraction.of(1, 0)).toThrow(RangeError);
    expect(() => Fraction.int(1).div(Fraction.int(0))).toThrow(/by zero/);
    expect(() => Fraction.of(0.5)).toThrow(/safe integer/);
  });
});
