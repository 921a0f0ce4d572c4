/**
 * The order vitest starts test files in (vitest.config.ts): the files that take minutes first, longest first,
 * then the rest in vitest's own order.
 *
 * Why: with two files at a time (`maxWorkers`), the run ends when its last file does. A fresh clone has no
 * vitest cache of past durations, so vitest would start the files in glob order, and the learning test (~6 min
 * alone, ~8 min beside another file) would start last and run on its own at the end. Started first, the short
 * files fill the other worker around the long ones. (Longest first is the classic greedy rule for finishing a
 * set of jobs on two machines early.)
 */
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Test files that take a minute or more on the 2-core CI machine, longest first (seconds measured alone on
 * 2026-11-28: 342, 192, 168, 141, 90, 59, 56). A file missing from the run is simply not there to reorder.
 */
export const SLOW_FILES: readonly string[] = [
  'tests/learning.test.ts',
  'tests/pipeline.test.ts',
  'tests/pipeline-cli.test.ts',
  'tests/pipeline-durability.test.ts',
  'src/pipeline/trainer-process.test.ts',
  'tests/cli-reward.test.ts',
  'tests/cli.test.ts',
];

/** Where a file goes: its place in `slow`, or after all of them. */
export function slowRank(file: string, slow: readonly string[] = SLOW_FILES): number {
  const i = slow.indexOf(file);
  return i < 0 ? slow.length : i;
}

/** {@link BaseSequencer}'s order, with {@link SLOW_FILES} moved to the front in their listed order. */
export default class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const root = this.ctx.config.root;
    const rank = new Map(sorted.map((f) => [f, slowRank(relative(root, f.moduleId).split('\\').join('/'))] as const));
    // Array#sort is stable: files of equal rank keep vitest's order.
    return sorted.sort((a, b) => (rank.get(a) ?? 0) - (rank.get(b) ?? 0));
  }
}
