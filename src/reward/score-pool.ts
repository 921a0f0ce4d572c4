import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { DomainProfile } from '../core/profiles/profile.js';
import { ConfigError } from '../core/errors.js';
import { MODULE_EXT } from '../core/package-root.js';

/**
 * Worker threads that score batches of JSONL lines for `scoreFile` (`gymflow reward score --workers N`).
 * Decoding, parsing, checking, scoring and serialising a line take far longer than reading it (`scoreFile` runs
 * at ~25 MB/s on one core, most of it JSON), so the thread that reads the file hands batches of raw bytes to N
 * threads and writes their scored lines back in input order.
 */

/** What every scoring thread is started with (`score-worker.ts`). */
export interface ScoreWorkerData {
  /** The name used in messages, as `file:line $.path: …`. */
  readonly label: string;
  /** The profile whose weights apply (plain data, copied to each thread). */
  readonly profile: DomainProfile;
  /** A calibration's JSON (`IsotonicCalibration.toJSON()`), rebuilt in each thread. */
  readonly calibration?: Record<string, unknown>;
  readonly referenceSteps?: number;
}

/**
 * Consecutive whole lines of the file as its raw bytes, blank ones included, the first of them line `firstLine`
 * (line 1 may start with a byte-order mark).
 */
export interface ScoreBatch {
  readonly seq: number;
  readonly firstLine: number;
  readonly bytes: Uint8Array<ArrayBuffer>;
}

/** What a thread made of a batch: its scored lines, each ending in `\n`, and the problems of the lines it skipped. */
export interface ScoredBatch {
  readonly seq: number;
  readonly text: string;
  readonly scored: number;
  readonly skipped: number;
  readonly errors: readonly string[];
}

/** A batch that failed as a whole (an error of the scorer, not of a line), as the thread reports it. */
export interface FailedBatch {
  readonly seq: number;
  readonly error: { readonly name: string; readonly code?: string; readonly message: string };
}

/** The thread's module: `score-worker.js` of the build, or `score-worker.ts` of the sources. */
const MODULE = new URL(`./score-worker${MODULE_EXT}`, import.meta.url);
/**
 * The built module runs as it is; from the sources, `bin/tsx-worker.js` first registers tsx in the new thread
 * (a thread does not inherit its creator's loaders), then imports the module.
 */
const ENTRY = MODULE_EXT === '.js' ? MODULE : new URL('../../bin/tsx-worker.js', import.meta.url);

interface Thread {
  readonly worker: Worker;
  /** Batches sent and not answered yet. */
  busy: number;
}

interface Waiting {
  readonly thread: Thread;
  resolve(batch: ScoredBatch): void;
  reject(err: Error): void;
}

/**
 * The threads' count for `--workers`: a positive integer, or 0 for one per core the process may use.
 *
 * @throws ConfigError otherwise, naming the option.
 */
export function resolveWorkers(workers: number): number {
  if (!Number.isInteger(workers) || workers < 0) throw new ConfigError(`workers must be a positive integer, or 0 for one per core; got ${String(workers)}`);
  return workers === 0 ? availableParallelism() : workers;
}

/** N scoring threads, each sent batches while it has the fewest waiting. */
export class ScorePool {
  private readonly threads: Thread[] = [];
  private readonly waiting = new Map<number, Waiting>();
  private failure: Error | undefined;
  private closing = false;

  constructor(count: number, data: ScoreWorkerData) {
    for (let k = 0; k < count; k++) {
      const worker = new Worker(ENTRY, { workerData: { ...data, module: MODULE.href } });
      const thread: Thread = { worker, busy: 0 };
      worker.on('message', (m: ScoredBatch | FailedBatch) => this.settle(m));
      worker.on('error', (err) => this.fail(err));
      worker.on('exit', (code) => {
        if (!this.closing) this.fail(new Error(`a scoring thread stopped (exit code ${code}) before the file was scored`));
      });
      this.threads.push(thread);
    }
  }

  /** Sends a batch to the least busy thread; resolves to its scored lines. */
  score(batch: ScoreBatch): Promise<ScoredBatch> {
    if (this.failure !== undefined) return Promise.reject(this.failure);
    let thread = this.threads[0] as Thread;
    for (const t of this.threads) if (t.busy < thread.busy) thread = t;
    thread.busy++;
    return new Promise((resolve, reject) => {
      this.waiting.set(batch.seq, { thread, resolve, reject });
      // The bytes move to the thread instead of being copied.
      thread.worker.postMessage(batch, [batch.bytes.buffer]);
    });
  }

  /** Stops every thread (what they were doing is dropped). */
  async close(): Promise<void> {
    this.closing = true;
    await Promise.all(this.threads.map((t) => t.worker.terminate()));
  }

  private settle(m: ScoredBatch | FailedBatch): void {
    const w = this.waiting.get(m.seq);
    if (w === undefined) return;
    this.waiting.delete(m.seq);
    w.thread.busy--;
    if ('error' in m) w.reject(rebuildError(m.error));
    else w.resolve(m);
  }

  /** A thread failed outside any batch (it crashed, or could not start): every batch waiting fails with it. */
  private fail(err: Error): void {
    this.failure ??= err;
    for (const w of this.waiting.values()) w.reject(this.failure);
    this.waiting.clear();
  }
}

/** A thread's error as the caller would have seen it in one thread: a bad setting stays a {@link ConfigError}. */
function rebuildError(e: FailedBatch['error']): Error {
  if (e.code === 'CONFIG_ERROR') return new ConfigError(e.message);
  const err = new Error(e.message);
  err.name = e.name;
  return err;
}
