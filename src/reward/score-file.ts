import { open, type FileHandle } from 'node:fs/promises';
import { ConfigError } from '../core/errors.js';
import { lineBreaks, streamJsonl } from '../core/jsonl-file.js';
import { openOutput, realPathOf, type OutputSink } from '../core/output-file.js';
import { checkTrajectoryJson, type Trajectory } from '../core/trajectory.js';
import { IsotonicCalibration } from './calibration/isotonic.js';
import { resolveWorkers, ScorePool, type ScoredBatch, type ScoreWorkerData } from './score-pool.js';
import { scoreTrajectory } from './score.js';
import type { ScoreOptions } from './types.js';

/**
 * Scoring a JSONL file of trajectories, streaming: one line in memory at a time (plus the trajectories
 * in flight; with scoring threads, two batches of ~1 MiB per thread), one scored line out per valid line in,
 * in input order.
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
   * Threads that parse, check and score the lines (default 1: this one; 0: one per core). The file is read
   * here and handed out in batches; the output is the same, byte for byte, in input order. For the rule layer
   * and a calibration: with a judge (raise `concurrency`: its calls are I/O) or a learned model, more than one
   * is a {@link ConfigError}.
   */
  workers?: number;
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
 * @throws ConfigError when the input cannot be read, `concurrency` is not a positive integer, or `workers` is
 *   not 0 or a positive integer or is more than 1 with a judge or a learned model; errors of the judge or the
 *   calibration propagate (nothing is written then).
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
  const workers = resolveWorkers(options.workers ?? 1);
  const scoreOptions: ScoreOptions = { profile: options.profile };
  if (options.judge !== undefined) scoreOptions.judge = options.judge;
  if (options.calibration !== undefined) scoreOptions.calibration = options.calibration;
  if (options.learned !== undefined) scoreOptions.learned = options.learned;
  if (options.referenceSteps !== undefined) scoreOptions.referenceSteps = options.referenceSteps;
  const threads = workers > 1 ? workerData(label, scoreOptions) : undefined;

  const inPlace = outPath !== '-' && (await realPathOf(outPath)) === (await realPathOf(inPath));
  const out = await openOutput(outPath, { replace: inPlace || (options.replace ?? true) });
  const summary: ScoreFileSummary = { scored: 0, skipped: 0, errors: [], written: false };
  try {
    if (threads === undefined) await scoreHere(inPath, label, scoreOptions, concurrency, out, summary);
    else await scoreInThreads(inPath, label, workers, threads, out, summary);
    if (inPlace && summary.skipped > 0) {
      await out.abort();
      return summary;
    }
    await out.commit();
    summary.written = true;
    return summary;
  } catch (err) {
    // Drop the partial output.
    await out.abort();
    throw err;
  }
}

/** Scores the file in this thread, `concurrency` trajectories at once, writing each in input order. */
async function scoreHere(inPath: string, label: string, options: ScoreOptions, concurrency: number, out: OutputSink, summary: ScoreFileSummary): Promise<void> {
  const inFlight: Promise<Trajectory>[] = [];
  const emitOldest = async (): Promise<void> => {
    const next = inFlight.shift();
    if (next === undefined) return;
    await out.write(`${JSON.stringify(await next)}\n`);
    summary.scored++;
  };
  try {
    const records = streamJsonl(inPath, label, checkTrajectoryJson);
    for await (const record of readable(records, label)) {
      if (!record.ok) {
        summary.skipped++;
        summary.errors.push(...record.errors);
        continue;
      }
      const scoring = scoreTrajectory(record.value, options);
      // Awaited in order later; until then a rejection must not count as unhandled.
      scoring.catch(() => undefined);
      inFlight.push(scoring);
      if (inFlight.length >= concurrency) await emitOldest();
    }
    while (inFlight.length > 0) await emitOldest();
  } finally {
    // On an error, settle what is still running so no rejection goes unhandled.
    await Promise.allSettled(inFlight);
  }
}

/** Bytes read at a time; a batch is what they hold up to their last line break. */
const BATCH_BYTES = 1 << 20;

/**
 * Scores the file in `workers` threads ({@link ScorePool}). This thread only reads: it cuts the file into
 * batches of whole lines (raw bytes, handed over without a copy), counts their line breaks to number each
 * batch's first line, and writes the scored lines back in input order, with at most two batches per thread
 * waiting, so memory stays bounded however large the file. Decoding and splitting the lines is the threads'
 * work (`splitLines`, core/jsonl-file.ts), with the line breaks `readLines` knows.
 */
async function scoreInThreads(inPath: string, label: string, workers: number, data: ScoreWorkerData, out: OutputSink, summary: ScoreFileSummary): Promise<void> {
  let file: FileHandle;
  try {
    file = await open(inPath, 'r');
  } catch (err) {
    throw cannotRead(label, err);
  }
  let pool: ScorePool | undefined;
  const inFlight: Promise<ScoredBatch>[] = [];
  const emitOldest = async (): Promise<void> => {
    const next = inFlight.shift();
    if (next === undefined) return;
    const batch = await next;
    if (batch.text !== '') await out.write(batch.text);
    summary.scored += batch.scored;
    summary.skipped += batch.skipped;
    summary.errors.push(...batch.errors);
  };
  let seq = 0;
  let line = 1;
  const send = async (threads: ScorePool, bytes: Uint8Array<ArrayBuffer>): Promise<void> => {
    // Counted first: sending moves the bytes away.
    const breaks = lineBreaks(bytes);
    const scoring = threads.score({ seq, firstLine: line, bytes });
    seq++;
    line += breaks;
    scoring.catch(() => undefined);
    inFlight.push(scoring);
    if (inFlight.length >= 2 * workers) await emitOldest();
  };
  try {
    pool = new ScorePool(workers, data);
    const chunk = Buffer.allocUnsafe(BATCH_BYTES);
    // What was read since the last line break, in pieces: a line longer than a chunk is joined once, at its end.
    let rest: Buffer[] = [];
    let restBytes = 0;
    for (;;) {
      let read: number;
      try {
        ({ bytesRead: read } = await file.read(chunk, 0, BATCH_BYTES, null));
      } catch (err) {
        throw cannotRead(label, err);
      }
      if (read === 0) break;
      const piece = chunk.subarray(0, read);
      // Whole lines only: a batch ends at its last \n (a \r\n is never cut in two), the rest waits for more.
      const cut = piece.lastIndexOf(10) + 1;
      if (cut === 0) {
        rest.push(Buffer.from(piece));
        restBytes += read;
        continue;
      }
      // The batch in a buffer of its own, which then moves to the thread without another copy.
      const batch = new Uint8Array(restBytes + cut);
      let at = 0;
      for (const r of rest) {
        batch.set(r, at);
        at += r.length;
      }
      batch.set(piece.subarray(0, cut), at);
      rest = [Buffer.from(piece.subarray(cut))];
      restBytes = read - cut;
      await send(pool, batch);
    }
    if (restBytes > 0) await send(pool, new Uint8Array(Buffer.concat(rest, restBytes)));
    while (inFlight.length > 0) await emitOldest();
  } finally {
    await Promise.allSettled(inFlight);
    await Promise.all([pool?.close(), file.close()]);
  }
}

/**
 * What each scoring thread needs, copied to it: the profile and the calibration as data.
 *
 * @throws ConfigError with a judge or a learned model, which score in one thread.
 */
function workerData(label: string, options: ScoreOptions): ScoreWorkerData {
  if (options.judge !== undefined) throw new ConfigError('workers: a judge scores in one thread (its calls are I/O): raise concurrency instead of workers');
  if (options.learned !== undefined) throw new ConfigError('workers: a learned reward model scores in one thread: leave workers at 1 with it');
  const data: { -readonly [K in keyof ScoreWorkerData]: ScoreWorkerData[K] } = { label, profile: options.profile };
  if (options.calibration !== undefined) {
    if (!(options.calibration instanceof IsotonicCalibration)) throw new ConfigError(`workers: only a calibration fitted by \`gymflow reward calibrate\` can be sent to scoring threads, not a '${options.calibration.kind}' one`);
    data.calibration = options.calibration.toJSON();
  }
  if (options.referenceSteps !== undefined) data.referenceSteps = options.referenceSteps;
  return data;
}

/** A failure to read the input itself, as a {@link ConfigError} naming it. */
function cannotRead(label: string, err: unknown): ConfigError {
  return new ConfigError(`${label}: cannot read: ${(err as Error).message}`);
}

/** The records of `records`, with a failure to read the file itself turned into a {@link ConfigError} naming it. */
async function* readable<T>(records: AsyncIterable<T>, label: string): AsyncGenerator<T> {
  try {
    yield* records;
  } catch (err) {
    throw cannotRead(label, err);
  }
}
