import type { Writable } from 'node:stream';
import { openOutput, type WriteOptions } from '../core/output-file.js';
import type { Trajectory } from '../core/trajectory.js';
import type { ConversionItem, ConversionProblem } from './adapter.js';
import { isConversionProblem } from './adapter.js';
import { defined } from '../core/defined.js';

/** What {@link writeJsonl} did. */
export interface WriteSummary {
  /** Trajectories written. */
  written: number;
  /** Problems seen (passed to `onProblem`, not written). */
  problems: number;
  /**
   * Whether the output was written. With `keepWhenEmpty` and no trajectory, it was not: an existing file
   * at the path is left as it was.
   */
  committed: boolean;
}

/**
 * Streams trajectories to a JSONL file (one per line), holding one record at a time and respecting
 * back-pressure. Problems in the stream go to `onProblem` (they are not written). A path is written
 * atomically (`openOutput`: a hidden temporary file beside it, renamed into place at the end, removed on
 * failure, so an existing file survives any failure); `-` or a `Writable` (e.g. `process.stdout`) is
 * written to and left open.
 *
 * @param options.keepWhenEmpty When nothing was converted, write nothing (`committed: false`) rather than
 *   replace the path with an empty file: a failed conversion must not wipe an earlier one.
 *
 * @example
 * ```ts
 * const summary = await writeJsonl(convertPath('logs/'), 'out.jsonl', { onProblem: (p) => console.error(formatProblem(p)) });
 * ```
 */
export async function writeJsonl(
  items: AsyncIterable<ConversionItem> | Iterable<ConversionItem> | AsyncIterable<Trajectory>,
  out: string | Writable,
  options: { onProblem?: (problem: ConversionProblem) => void; keepWhenEmpty?: boolean } & WriteOptions = {},
): Promise<WriteSummary> {
  const summary: WriteSummary = { written: 0, problems: 0, committed: false };
  const sink = await openOutput(out, defined({ replace: options.replace }));
  try {
    for await (const item of items as AsyncIterable<ConversionItem>) {
      if (isConversionProblem(item)) {
        summary.problems += 1;
        options.onProblem?.(item);
        continue;
      }
      await sink.write(`${JSON.stringify(item)}\n`);
      summary.written += 1;
    }
  } catch (err) {
    await sink.abort();
    throw err;
  }
  if (summary.written === 0 && options.keepWhenEmpty === true) {
    await sink.abort();
    return summary;
  }
  await sink.commit();
  summary.committed = true;
  return summary;
}
