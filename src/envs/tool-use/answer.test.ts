import { describe, expect, it } from 'vitest';
import { checkAnswer, extractNumber, normalizeAnswer } from './answer.js';

describe('tool-use answers', () => {
  it('extracts the single number of an answer', () => {
    expect(extractNumber('48,200')).toBe(48200);
    expect(extractNumber(' 36.13 crowns')).toBe(36.13);
    expect(extractNumber('-7')).toBe(-7);
    expect(extractNumber('area: 61 km2')).toBe(61);
    expect(extractNumber('1921 or 1922')).toBeUndefined();
    expect(extractNumber('none')).toBeUndefined();
  });

  it('accepts numbers within max(0.01, 1e-6 relative)', () => {
    const expected = { type: 'number', value: 36.125 } as const;
    expect(checkAnswer('36.13', expected)).toBe(true);
    expect(checkAnswer('36.12', expected)).toBe(true);
    expect(checkAnswer('36.14', expected)).toBe(false);
    expect(checkAnswer('786250.5', { type: 'number', value: 786250 })).toBe(true);
    expect(checkAnswer('786252', { type: 'number', value: 786250 })).toBe(false);
    expect(checkAnswer('67', { type: 'number', value: 67 })).toBe(true);
    expect(checkAnswer('sixty-seven', { type: 'number', value: 67 })).toBe(false);
  });

  it('compares names after normalisation', () => {
    expect(normalizeAnswer('  "The Drummerlin (city)." ')).toBe('drummerlin');
    const expected = { type: 'string', value: 'Orla Venn' } as const;
    expect(checkAnswer('orla  venn', expected)).toBe(true);
    expect(checkAnswer('Orla', expected)).toBe(false);
    expect(checkAnswer('salt & minerals', { type: 'string', value: 'salt and minerals' })).toBe(true);
  });
});
