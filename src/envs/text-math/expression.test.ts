import { describe, expect, it } from 'vitest';
import { evaluate, num, op, render } from './expression.js';

describe('expression', () => {
  it('renders with the fewest parentheses that keep the meaning', () => {
    expect(render(op('+', num(3), op('×', num(4), num(5))))).toBe('3 + 4 × 5');
    expect(render(op('×', op('+', num(3), num(4)), num(5)))).toBe('(3 + 4) × 5');
    expect(render(op('-', num(10), op('-', num(4), num(1))))).toBe('10 - (4 - 1)');
    expect(render(op('-', op('-', num(10), num(4)), num(1)))).toBe('10 - 4 - 1');
    expect(render(op('÷', num(7), num(-2)))).toBe('7 ÷ (-2)');
  });

  it('evaluates exactly, with precedence given by the tree', () => {
    expect(evaluate(op('+', num(3), op('×', num(4), num(5)))).toString()).toBe('23');
    expect(evaluate(op('-', num(1), op('÷', num(1), num(3)))).toString()).toBe('2/3');
  });
});
