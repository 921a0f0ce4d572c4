import { describe, expect, it } from 'vitest';
import { Rng } from './rng.js';
import { sampleFromSchema } from './schema-sample.js';

describe('sampleFromSchema', () => {
  it('follows the schema keywords', () => {
    const rng = new Rng(1);
    for (let i = 0; i < 200; i++) {
      const n = sampleFromSchema({ type: 'integer', minimum: 1, maximum: 3 }, rng) as number;
      expect(Number.isInteger(n) && n >= 1 && n <= 3).toBe(true);
      expect(['a', 'b']).toContain(sampleFromSchema({ enum: ['a', 'b'] }, rng));
      expect(typeof sampleFromSchema({ type: 'boolean' }, rng)).toBe('boolean');
      expect((sampleFromSchema({ type: 'string', minLength: 5, maxLength: 6 }, rng) as string).length).toBeGreaterThanOrEqual(5);
      const x = sampleFromSchema({ type: 'number', minimum: -1, maximum: 1 }, rng) as number;
      expect(x >= -1 && x <= 1).toBe(true);
    }
  });

});
