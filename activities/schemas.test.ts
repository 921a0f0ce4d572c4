import { describe, expect, it } from 'vitest';
import { sectionFromFields } from './schemas.js';

describe('sectionFromFields', () => {
  const fromFields = sectionFromFields('eval', { maxSteps: 'max_steps', seed: 'seed' });

  it('moves the old fields into the section under their new names and keeps the others', () => {
    expect(fromFields({ envId: 'e', maxSteps: 3, seed: 0, name: 'n' })).toEqual({ envId: 'e', name: 'n', eval: { max_steps: 3, seed: 0 } });
  });

  it('leaves an absent or undefined field out of the section', () => {
    expect(fromFields({ envId: 'e', maxSteps: undefined })).toEqual({ envId: 'e', eval: {} });
  });

  it('returns the current shape, and anything that is not an object, as it is', () => {
    const current = { envId: 'e', eval: { max_steps: 3 }, maxSteps: 9 };
    expect(fromFields(current)).toBe(current);
    for (const v of [null, undefined, 'x', 3, [1]]) expect(fromFields(v)).toBe(v);
  });
});
