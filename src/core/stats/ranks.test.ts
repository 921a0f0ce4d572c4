import { describe, expect, it } from 'vitest';
import { averageRanks } from './ranks.js';

describe('averageRanks', () => {
  it('ranks ties by their average rank', () => {
    expect(averageRanks([10, 20, 20, 5])).toEqual([2, 3.5, 3.5, 1]);
  });
});
