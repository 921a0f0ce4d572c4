import { describe, expect, it } from 'vitest';
import { mentions, mentionsAll, missingOutputs, normalizeText } from './text.js';

describe('conversation text checks', () => {
  it('normalises case, commas, # and spaces', () => {
    expect(normalizeText('  Order #W1234567,  total 1,234.50 ')).toBe('order w1234567 total 1234.50');
    expect(mentions('your order W1234567 is cancelled', '#W1234567')).toBe(true);
    expect(mentions('anything', '')).toBe(false);
  });

  it('needs one alternative of every group', () => {
    const groups = [['#W1'], ['no longer needed', 'not needed']];
    expect(mentionsAll('Cancel #W1 because it is not needed?', groups)).toBe(true);
    expect(mentionsAll('Cancel #W1?', groups)).toBe(false);
    expect(mentionsAll('anything', [])).toBe(true);
  });

  it('lists the required outputs no message told', () => {
    expect(missingOutputs(['The tracking number is 123456.', 'You paid $1,234.50.'], ['123456', '1234.50', '99.00'])).toEqual(['99.00']);
    expect(missingOutputs([], ['x'])).toEqual(['x']);
  });
});
