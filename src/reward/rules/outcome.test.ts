import { describe, expect, it } from 'vitest';
import { outcomeScore } from './outcome.js';

describe('outcome rule', () => {
  it('trusts success, else clamps the score into [0, 1]', () => {
    expect(outcomeScore({ success: true, score: 0.2 })).toBe(1);
    expect(outcomeScore({ success: false, score: 0.25 })).toBe(0.25);
    expect(outcomeScore({ success: false, score: 1.5 })).toBe(1);
    expect(outcomeScore({ success: false, score: -1 })).toBe(0);
  });
});
