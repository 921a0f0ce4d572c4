/**
 * The order test files start in (tests/support/sequencer.ts), checked on this repository's own files through
 * vitest's API with the project's config: the slow files come first, longest first, and every other file
 * follows in vitest's own order.
 */
import { existsSync } from 'node:fs';
import { join, relative } from 'node:path';
import { BaseSequencer, createVitest } from 'vitest/node';
import { describe, expect, it } from 'vitest';
import SlowFirstSequencer, { SLOW_FILES, slowRank } from './support/sequencer.js';
import { repoRoot } from './support/temporal.js';

describe('SlowFirstSequencer', () => {
  it('lists only files that exist (a renamed slow file would silently lose its place)', () => {
    for (const file of SLOW_FILES) expect(existsSync(join(repoRoot, file)), file).toBe(true);
  });

  it('ranks listed files by their place and every other file after them', () => {
    expect(slowRank('tests/learning.test.ts')).toBe(0);
    expect(slowRank('tests/cli.test.ts')).toBe(SLOW_FILES.length - 1);
    expect(slowRank('src/core/rng.test.ts')).toBe(SLOW_FILES.length);
    expect(slowRank('b', ['a', 'b'])).toBe(1);
  });

  it('starts the slow files first on the project’s own files, the rest in vitest’s order, two or more at a time', { timeout: 60_000 }, async () => {
    const vitest = await createVitest('test', { root: repoRoot, watch: false, reporters: [] });
    try {
      const specs = await vitest.globTestSpecifications();
      const names = (list: readonly { moduleId: string }[]): string[] => list.map((s) => relative(repoRoot, s.moduleId));
      const ours = names(await new SlowFirstSequencer(vitest).sort([...specs]));
      const base = names(await new BaseSequencer(vitest).sort([...specs]));
      expect(ours.slice(0, SLOW_FILES.length)).toEqual(SLOW_FILES);
      expect(ours.slice(SLOW_FILES.length)).toEqual(base.filter((f) => !SLOW_FILES.includes(f)));
      expect(ours.length).toBeGreaterThan(100);
      // Two files at a time at least, also on the 2-core CI machine (vitest's own default there is one).
      expect(vitest.config.maxWorkers).toBeGreaterThanOrEqual(2);
    } finally {
      await vitest.close();
    }
  });
});
