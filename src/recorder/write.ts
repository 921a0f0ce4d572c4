import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import type { Writable } from 'node:stream';
import type { Trajectory } from '../core/trajectory.js';
import type { ConversionItem, ConversionProblem } from './adapter.js';
import { isConversionProblem } from './adapter.js';

/** What {@link writeJsonl} did. */
export interface WriteSummary {
  /** Trajectories written. */
  written: number;
  /** Problems seen (passed to `onProblem`, not written). */
  problems: number;
}

/**
 * Streams trajectories to a JSONL file (one per line), holding one record at a time and respecting
 * back-pressure. Problems in the stream go to `onProblem` (they are not written). A path is written
 * atomically: to `<path>.partial`, renamed into place at the end, removed on failure. A `Writable`
 * (e.g. `process.stdout`) is written to and left open.
 *
 * @example
 * ```ts
 * const summary = await writeJsonl(convertPath('logs/'), 'out.jsonl', { onProblem: (p) => console.error(formatProblem(p)) });
 * ```
 */
export async function writeJsonl(
  items: AsyncIterable<ConversionItem> | Iterable<ConversionItem> | AsyncIterable<Trajectory>,
  out: string | Writable,
  options: { onProblem?: (problem: ConversionProblem) => void } = {},
): Promise<WriteSummary> {
  const summary: WriteSummary = { written: 0, problems: 0 };
  const target = typeof out === 'string' ? `${out}.partial` : undefined;
  const stream: Writable = target !== undefined ? createWriteStream(target, { encoding: 'utf8' }) : (out as Writable);
  try {
    for await (const item of items as AsyncIterable<ConversionItem>) {
      if (isConversionProblem(item)) {
        summary.problems += 1;
        options.onProblem?.(item);
        continue;
      }
      if (!stream.write(`${JSON.stringify(item)}\n`)) await once(stream, 'drain');
      summary.written += 1;
    }
    if (target !== undefined && typeof out === 'string') {
      stream.end();
      await once(stream, 'finish');
      await rename(target, out);
    }
  } catch (err) {
    if (target !== undefined) {
      stream.destroy();
      await rm(target, { force: true });
    }
    throw err;
  }
  return summary;
}
