import { createReadStream } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { randomBytes } from 'node:crypto';
import { ConfigError } from '../core/errors.js';
import { parseJsonlLines, parseTrajectory, type JsonlRecord, type Trajectory } from '../core/trajectory.js';
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
}

/** What {@link scoreFile} did. */
export interface ScoreFileSummary {
  /** Lines scored and written. */
  scored: number;
  /** Non-blank lines skipped because they are not valid trajectories. */
  skipped: number;
  /** Every problem of the skipped lines, as `file:line $.path: message`. */
  errors: string[];
}

/** Output is written in chunks of about this many characters. */
const FLUSH_CHARS = 1 << 20;

/**
 * Yields the JSONL records of a file through core's {@link parseJsonlLines}, so problems are reported
 * exactly as everywhere else (`file:line $.path: message`). `parseJsonlLines` is synchronous; lines are fed
 * to it as `readline` produces them, and it is asked for a record only once a non-blank line is waiting.
 */
async function* readRecords(inPath: string, label: string): AsyncGenerator<JsonlRecord<Trajectory>> {
  const waiting: string[] = [];
  const source: Iterable<string> = {
    [Symbol.iterator]: (): Iterator<string> => ({
      next: (): IteratorResult<string> => {
        const text = waiting.shift();
        return text === undefined ? { value: undefined, done: true } : { value: text, done: false };
      },
    }),
  };
  const records = parseJsonlLines(source, label, parseTrajectory);
  const input = createReadStream(inPath, { encoding: 'utf8' });
  const lines = createInterface({ input, crlfDelay: Infinity });
  let first = true;
  try {
    for await (const raw of lines) {
      const line = first && raw.startsWith('\uFEFF') ? raw.slice(1) : raw;
      first = false;
      waiting.push(line);
      if (line.trim() === '') continue;
      const next = records.next();
      if (!next.done) yield next.value;
    }
  } catch (err) {
    throw new ConfigError(`${label}: cannot read: ${(err as Error).message}`);
  } finally {
    lines.close();
    input.destroy();
  }
}

/**
 * Scores every trajectory of a JSONL file and writes the scored trajectories to `outPath` as JSONL.
 *
 * Invalid lines (not JSON, or not a trajectory) are skipped and reported in the summary; the rest of the
 * file goes on. The output is written to a temporary file beside `outPath`, flushed to disk and renamed
 * over `outPath` only once everything succeeded: a crash or an error never leaves a half-written file
 * under the final name (the temporary file is removed on error). `inPath` may equal `outPath`.
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

  const dir = path.dirname(path.resolve(outPath));
  const tmp = path.join(dir, `.${path.basename(outPath)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  const handle = await open(tmp, 'w');
  const summary: ScoreFileSummary = { scored: 0, skipped: 0, errors: [] };
  let buffer = '';
  const flush = async (): Promise<void> => {
    if (buffer === '') return;
    const chunk = buffer;
    buffer = '';
    await handle.write(chunk);
  };
  const inFlight: Promise<Trajectory>[] = [];
  const emitOldest = async (): Promise<void> => {
    const next = inFlight.shift();
    if (next === undefined) return;
    buffer += `${JSON.stringify(await next)}\n`;
    summary.scored++;
    if (buffer.length >= FLUSH_CHARS) await flush();
  };
  let closed = false;
  try {
    for await (const record of readRecords(inPath, label)) {
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
    await flush();
    await handle.sync();
    await handle.close();
    closed = true;
    await rename(tmp, outPath);
    return summary;
  } catch (err) {
    // Settle what is still running so no rejection goes unhandled, then drop the partial output.
    await Promise.allSettled(inFlight);
    if (!closed) await handle.close().catch(() => undefined);
    await rm(tmp, { force: true });
    throw err;
  }
}
