import { describe, expect, it } from 'vitest';
import { gradeAnswer, NON_CANONICAL_CREDIT, parseAnswer } from './answer.js';
import { Fraction } from './fraction.js';

const threeQuarters = Fraction.of(3, 4);
const fortyTwo = Fraction.int(42);

describe('parseAnswer', () => {
  it.each(['42', '-7', '0', '3/4', '-5/2', '  42  ', '\t3/4\n'])('reads %j as canonical', (text) => {
    expect(parseAnswer(text)?.canonical).toBe(true);
  });

  it.each([
    ['+42', '42'],
    ['042', '42'],
    ['-0', '0'],
    ['42.0', '42'],
    ['1,000', '1000'],
    ['0.75', '3/4'],
    ['.75', '3/4'],
    ['6/8', '3/4'],
    ['3 / 4', '3/4'],
    ['3/-4', '-3/4'],
    ['4/1', '4'],
    ['1 1/2', '3/2'],
    ['-1 1/2', '-3/2'],
    ['\u22127', '-7'],
  ])('reads %j as the non-canonical %s', (text, value) => {
    const parsed = parseAnswer(text);
    expect(parsed?.canonical).toBe(false);
    expect(parsed?.value.toString()).toBe(value);
  });

  it.each(['', 'abc', '3/0', '1e3', '42 apples', '3/4/5', '2+2', 'process.exit(1)', '1'.repeat(100)])('rejects %j', (text) => {
    expect(parseAnswer(text)).toBeUndefined();
  });
});

describe('gradeAnswer', () => {
  it('gives 1 for the right value in canonical form', () => {
    expect(gradeAnswer('3/4', threeQuarters)).toEqual({ reward: 1, verdict: 'correct', parsed: '3/4' });
    expect(gradeAnswer(' 42 ', fortyTwo).reward).toBe(1);
  });

  it('gives partial credit for the right value in another form', () => {
    for (const text of ['0.75', '6/8', '+3/4']) expect(gradeAnswer(text, threeQuarters).reward).toBe(NON_CANONICAL_CREDIT);
    for (const text of ['42.0', '+42', '42/1']) expect(gradeAnswer(text, fortyTwo).verdict).toBe('non_canonical');
    expect(gradeAnswer('1,000', Fraction.int(1000)).reward).toBe(0.5);
  });

  it('gives 0 for wrong, approximate or unreadable answers', () => {
    expect(gradeAnswer('4/3', threeQuarters)).toMatchObject({ reward: 0, verdict: 'wrong' });
    expect(gradeAnswer('0.333', Fraction.of(1, 3)).reward).toBe(0);
    expect(gradeAnswer('forty-two', fortyTwo)).toEqual({ reward: 0, verdict: 'unparseable' });
  });
});
