import { describe, expect, it } from 'vitest';
import { OutcomeSchema } from '../core/trajectory.js';
import { clampScore, terminated, truncated, unfinished } from './outcome.js';

describe('outcome constructors', () => {
  it('build outcomes the schema accepts', () => {
    for (const o of [terminated('submitted'), truncated('error', { success: false }), unfinished(), terminated('responded', { success: true, score: 0.5 })]) {
      expect(OutcomeSchema.safeParse(o).success).toBe(true);
    }
    expect(terminated('x', { success: true })).toMatchObject({ success: true, score: 1 });
    expect(clampScore(3)).toBe(1);
    expect(clampScore(-1)).toBe(0);
  });
});
