import fc from 'fast-check';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { ciRuns, type FuzzTarget } from './harness.js';
import { defined } from '../../src/core/defined.js';

/**
 * Runs fuzz targets as vitest tests, each with {@link ciRuns} cases. A failure's message carries fast-check's
 * seed and path; `GYMFLOW_FUZZ_SEED` replays a seed (and `npx tsx bench/fuzz.ts --target NAME --seed S --path P`
 * replays one case).
 */
export function describeTargets(group: string, targets: readonly FuzzTarget[]): void {
  describe(`fuzz: ${group}`, () => {
    beforeAll(async () => {
      for (const t of targets) await t.setup?.();
    });
    afterAll(async () => {
      for (const t of targets) await t.cleanup?.();
    });
    for (const target of targets) {
      it(`${target.name}: ${ciRuns(target)} cases`, async () => {
        const seed = process.env.GYMFLOW_FUZZ_SEED === undefined ? undefined : Number(process.env.GYMFLOW_FUZZ_SEED);
        await fc.assert(target.property() as fc.IAsyncProperty<unknown>, { numRuns: ciRuns(target), ...defined({ seed }) });
      });
    }
  });
}
