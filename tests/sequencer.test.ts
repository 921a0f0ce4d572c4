/**
 * The order test files start in (tests/support/sequencer.ts), checked on this repository's own files through
 * vitest's API with the project's config: the slow files first, longest first, every other file in vitest's
 * own order, and the learning test last.
 */
import { existsSync } from 'node:fs';
import { join, relative } from 'node:path';
import { BaseSequencer, createVitest } from 'vitest/node';
import { describe, expect, it } from 'vitest';
import SlowFirstSequencer, { fileRank, LAST_FILES, SLOW_FILES } from './support/sequencer.js';
import { PACKAGE_ROOT } from '../src/core/package-root.js';

describe('SlowFirstSequencer', () => {
  it('lists only files that exist (a renamed file would silently lose its place)', () => {
    for (const file of [...SLOW_FILES, ...LAST_FILES]) expect(existsSync(join(PACKAGE_ROOT, file)), file).toBe(true);
  });

  it('ranks the slow files by their place, then every other file, then the last ones', () => {
    expect(fileRank('tests/pipeline-durability.test.ts')).toBe(0);
    expect(fileRank('tests/cli.test.ts')).toBe(SLOW_FILES.length - 1);
    expect(fileRank('src/core/rng.test.ts')).toBe(SLOW_FILES.length);
    expect(fileRank('tests/cluster.test.ts')).toBe(SLOW_FILES.length + 1);
    expect(fileRank('tests/learning.test.ts')).toBe(SLOW_FILES.length + 3);
  });

  it('orders the project’s own files so, two or more at a time', { timeout: 60_000 }, async () => {
    const vitest = await createVitest('test', { root: PACKAGE_ROOT, watch: false, reporters: [] });
    try {
      const specs = await vitest.globTestSpecifications();
      const names = (list: readonly { moduleId: string }[]): string[] => list.map((s) => relative(PACKAGE_ROOT, s.moduleId));
      const ours = names(await new SlowFirstSequencer(vitest).sort([...specs]));
      const base = names(await new BaseSequencer(vitest).sort([...specs]));
      expect(ours.slice(0, SLOW_FILES.length)).toEqual(SLOW_FILES);
      expect(ours.slice(-LAST_FILES.length)).toEqual(LAST_FILES);
      expect(ours.slice(SLOW_FILES.length, -LAST_FILES.length)).toEqual(base.filter((f) => !SLOW_FILES.includes(f) && !LAST_FILES.includes(f)));
      expect(ours.length).toBeGreaterThan(100);
      // Two files at a time at least, also on the 2-core CI machine (vitest's own default there is one).
      expect(vitest.config.maxWorkers).toBeGreaterThanOrEqual(2);
    } finally {
      await vitest.close();
    }
  });
});
