import { describe, expect, it } from 'vitest';
import { regularizedIncompleteBeta } from './beta.js';
import { expectClose } from './__fixtures__/expect-close.js';

// Reference values: scipy 1.17.1,
//   python -c "from scipy import special; print(repr(float(special.betainc(a, b, x))))"
describe('regularizedIncompleteBeta', () => {
  it.each([
    [0.5, 0.5, 0.3, 0.36901011956554536],
    [2, 3, 0.4, 0.5247999999999999],
    [10, 0.5, 0.9, 0.15164090963470994],
    [0.5, 10, 0.01, 0.3420718248432154],
    [150, 0.5, 0.99, 0.0827480032540805],
    [3.7, 8.1, 0.35, 0.6322165280886565],
  ])('I_x(a=%f, b=%f) at x=%f matches scipy.special.betainc', (a, b, x, expected) => {
    expectClose(regularizedIncompleteBeta(x, a, b), expected, 1e-12);
  });

  it('satisfies the symmetry I_x(a, b) = 1 − I_{1−x}(b, a)', () => {
    for (const [a, b, x] of [[2.5, 7, 0.2], [30, 4, 0.85], [0.7, 0.3, 0.5]] as const) {
      expectClose(regularizedIncompleteBeta(x, a, b), 1 - regularizedIncompleteBeta(1 - x, b, a), 1e-13, 1e-15);
    }
  });

  it('is exact at the ends and rejects bad arguments by name', () => {
    expect(regularizedIncompleteBeta(0, 2, 3)).toBe(0);
    expect(regularizedIncompleteBeta(1, 2, 3)).toBe(1);
    expect(() => regularizedIncompleteBeta(1.5, 2, 3)).toThrow(/x must be in \[0, 1\], got 1.5/);
    expect(() => regularizedIncompleteBeta(0.5, -1, 3)).toThrow(/a must be a positive/);
    expect(() => regularizedIncompleteBeta(0.5, 1, 0)).toThrow(/b must be a positive/);
  });
});
