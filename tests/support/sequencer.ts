/**
 * The order vitest starts test files in (vitest.config.ts), two at a time: the files that take minutes first,
 * longest first; then the rest in vitest's own order; and the learning test last, on its own.
 *
 * Why: the run ends when its last file does. A fresh clone has no vitest cache of past durations, so vitest
 * would start files in glob order, and a long file started late would run alone at the end while the other
 * worker idles. Started first, the short files fill the other worker around the long ones (longest first is
 * the classic greedy rule for finishing a set of jobs on two machines early).
 *
 * The learning test is the exception. Its trainer trains for minutes with torch's OpenMP threads, which spin
 * waiting for each other; beside another file's trainers and dev server on two cores they barely progress.
 * Measured from a clean clone on 2026-11-28: its SFT took 395 s when it ran last, nearly alone, and 1,335 s
 * when it started first, beside the other files.
 */
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Test files that take a minute or more on the 2-core CI machine, longest first (seconds measured alone on
 * 2026-11-28: 192, 168, 141, 90, 59, 56; on 2026-12-05 the durability file gained ~150 s of worker kills, the
 * pipeline file a benchmark loop, and the fork, reward-section and SWE-bench files came, at about 70, 64 and
 * 60 s under load; on 2026-12-06 the worker image file, whose `docker build` takes minutes on a fresh machine). A
 * file missing from the run is simply not there to reorder.
 */
export const SLOW_FILES: readonly string[] = [
  'tests/pipeline-durability.test.ts',
  'tests/worker-image.test.ts',
  'tests/pipeline.test.ts',
  'tests/pipeline-cli.test.ts',
  'src/runtime/trainer-process.test.ts',
  'tests/pipeline-fork.test.ts',
  'tests/pipeline-reward.test.ts',
  'tests/swe.test.ts',
  'tests/cli-reward.test.ts',
  'tests/cli.test.ts',
];

/**
 * Files that start after all others (see the module documentation). The cluster test is first of them: on a
 * fresh CI machine it waits for the Temporal server's build, which setup starts in the background, so it
 * starts once the build had the whole run to finish. The two learning tests train for minutes each: the RL one
 * beside the cluster test (which mostly waits on its processes), the SFT one last.
 */
export const LAST_FILES: readonly string[] = ['tests/cluster.test.ts', 'tests/rl-learning.test.ts', 'tests/learning.test.ts'];

/** Where a file goes: its place in `SLOW_FILES`, then every other file, then `LAST_FILES` in their order. */
export function fileRank(file: string): number {
  const slow = SLOW_FILES.indexOf(file);
  if (slow >= 0) return slow;
  const last = LAST_FILES.indexOf(file);
  return last >= 0 ? SLOW_FILES.length + 1 + last : SLOW_FILES.length;
}

/** {@link BaseSequencer}'s order, with {@link SLOW_FILES} moved to the front and {@link LAST_FILES} to the end. */
export default class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const root = this.ctx.config.root;
    const rank = new Map(sorted.map((f) => [f, fileRank(relative(root, f.moduleId).split('\\').join('/'))] as const));
    // Array#sort is stable: files of equal rank keep vitest's order.
    return sorted.sort((a, b) => (rank.get(a) ?? 0) - (rank.get(b) ?? 0));
  }
}
