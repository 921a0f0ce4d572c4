import { ConfigError } from '../core/errors.js';
import { streamJsonl } from '../core/jsonl-file.js';
import { openOutput, realPathOf } from '../core/output-file.js';
import { checkTrajectory, type Trajectory } from '../core/trajectory.js';
import { scoreTrajectory } from './score.js';
import type { ScoreOptions } from './types.js';

/**
 * Scoring a JSONL file of trajectories, streaming: one line in memory at a time (plus the trajectories
 * in flight), one scored line out per valid line in, in input order.
 */

/** Options of {@link scoreFile}. */
export interface ScoreFileOptions extends ScoreOptions {
  /** The name used in error messages (default: `inPath` as given). */
  label?: string;
  /**
   * Trajectories scored at once (default 1). Worth raising with a judge, whose calls are I/O; output order
   * is the input order regardless.
   */
  concurrency?: number;
  /**
   * Replace another file at `outPath` that holds something when the output is committed (default true; the
   * input itself, scored in place, always is): core's `WriteOptions`.
   */
  replace?: boolean;
}

/** What {@link scoreFile} did. */
export interface ScoreFileSummary {
  /** Lines scored and written. */
  scored: number;
  /** Non-blank lines skipped because they are not valid trajectories (see {@link scoreFile}). */
  skipped: number;
  /** Every problem of the skipped lines, as `file:line $.path: message`. */
  errors: string[];
  /**
   * Whether the output was written. It is not when `outPath` is the input and lines were skipped: rewriting
   * the input would lose those lines for good, so it is left as it was.
   */
  written: boolean;
}

/**
 * Scores every trajectory of a JSONL file and writes the scored trajectories to `outPath` as JSONL.
 *
 * Invalid lines (not JSON, not a trajectory, or an `id` that is not the content id of the record, which
 * calibration and preferences match trajectories by) are skipped and reported in the summary; the rest of
 * the file goes on. The output is written atomically ({@link openOutput}): a crash or an error never leaves
 * a half-written file under the final name, nor touches an existing one. `inPath` may equal `outPath`
 * (scored in place), unless a line is skipped: then nothing is written (`written: false`), since the new file
 * would lose that line. `outPath` `-` writes to stdout.
 *
 * @throws ConfigError when the input cannot be read or `concurrency` is not a positive integer; errors of
 *   the judge or the calibration propagate (nothing is written then).
 *
 * @example
 * ```ts
 * const summary = await scoreFile('runs.jsonl', 'scored.jsonl', { profile: getProfile('coding') });
 * for (const e of summary.errors) console.error(e); // runs.jsonl:17 $.steps[3].action.tool: …
 * ```
 */
export async function scoreFile(inPath: string, outPath: string, options: ScoreFileOptions): Promise<ScoreFileSummary> {
  const label = options.label ?? inPath;
  const concurrency = options.concurrency ?? 1;
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new ConfigError(`concurrency must be a positive integer, got ${String(concurrency)}`);
  }
  const scoreOptions: ScoreOptions = { profile: options.profile };
  if (options.judge !== undefined) scoreOptions.judge = options.judge;
  if (options.calibration !== undefined) scoreOptions.calibration = options.calibration;
  if (options.learned !== undefined) scoreOptions.learned = options.learned;
  if (options.referenceSteps !== undefined) scoreOptions.referenceSteps = options.referenceSteps;

  const inPlace = outPath !== '-' && (await realPathOf(outPath)) === (await realPathOf(inPath));
  const out = await openOutput(outPath, { replace: inPlace || (options.replace ?? true) });
  const summary: ScoreFileSummary = { scored: 0, skipped: 0, errors: [], written: false };
  const inFlight: Promise<Trajectory>[] = [];
  const emitOldest = async (): Promise<void> => {
    const next = inFlight.shift();
    if (next === undefined) return;
    await out.write(`${JSON.stringify(await next)}\n`);
    summary.scored++;
  };
  try {
    const records = streamJsonl(inPath, label, checkTrajectory);
    for await (const record of readable(records, label)) {
      if (!record.ok) {
        summary.skipped++;
        summary.errors.push(...record.errors);
        continue;
      }
      const scoring = scoreTrajectory(record.value, scoreOptions);
      // Awaited in order later; until then a rejection must not count as unhandled.
      scoring.catch(() => undefined);
      inFlight.push(scoring);
      if (inFlight.length >= concurrency) await emitOldest();
    }
    while (inFlight.length > 0) await emitOldest();
    if (inPlace && summary.skipped > 0) {
      await out.abort();
      return summary;
    }
    await out.commit();
    summary.written = true;
    return summary;
  } catch (err) {
    // Settle what is still running so no rejection goes unhandled, then drop the partial output.
    await Promise.allSettled(inFlight);
    await out.abort();
    throw err;
  }
}

/** The records of `records`, with a failure to read the file itself turned into a {@link ConfigError} naming it. */
async function* readable<T>(records: AsyncIterable<T>, label: string): AsyncGenerator<T> {
  try {
    yield* records;
  } catch (err) {
    throw new ConfigError(`${label}: cannot read: ${(err as Error).message}`);
  }
}
