import { expect } from 'vitest';

/**
 * Asserts |actual − expected| ≤ rel·|expected| + abs (test helper for reference values).
 * Not part of the public surface; only the tests of this folder import it.
 */
export function expectClose(actual: number, expected: number, rel = 1e-6, abs = 0): void {
  const tol = rel * Math.abs(expected) + abs;
  if (!(Math.abs(actual - expected) <= tol)) {
    expect.fail(`expected ${actual} to be within ${tol} of ${expected} (rel ${rel}, abs ${abs})`);
  }
}
