import { createHash } from 'node:crypto';
import { writeSync } from 'node:fs';
import { open, readdir, readFile, rm, stat, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { ensureDir, isErrno } from '../../core/fs.js';
import type { Trajectory } from '../../core/trajectory.js';
import { fastParseTrajectory } from '../../core/trajectory-fast.js';
import { joinTrajectory, type StoredTrajectory } from './trajectory-set.js';
import { StoreError } from '../errors.js';

/**
 * Episode journals (docs/store.md, "Journals"): what a unit of work that runs many episodes (a collection shard,
 * an evaluation) has finished so far, kept so that a retry after a crash runs only the rest.
 *
 * ```
 * <root>/journals/<sha256 of the key>.jsonl   one line per finished episode: {"index": i, "trajectory": …}
 *                                             or, from a collection, {"index": i, "id": …, "behaviour": …, "extra": …}
 * ```
 *
 * The second form is the trajectory as a trajectory set stores it (`storedTrajectory`): a collection serialises
 * each episode once, and its set reuses that (`collect`'s `onEpisode`), so the journal adds a write, not a
 * serialisation.
 *
 * A line is written (to the kernel) before the episode's worker takes its next episode, so a killed process loses
 * at most the episodes in flight (one per worker: {@link EpisodeJournal.append}); the file is made durable (`fdatasync`) at most {@link JOURNAL_SYNC_MS} after a
 * write, so a host that goes down loses at most that much more. The key names the unit of work (for an activity:
 * its workflow, run and activity id, the same on every attempt). A crash can cut the last line short: reading
 * stops there. The journal is removed once the unit's result is stored; `store gc` removes journals nobody
 * touched for a week.
 */

const JOURNALS_DIR = 'journals';

/** How long after a write the journal is made durable by default (`syncEveryMs`; 0 syncs every write). */
export const JOURNAL_SYNC_MS = 1_000;

/** Journals older than this (by modification time) are abandoned: `gc` removes them. */
export const ABANDONED_JOURNAL_MS = 7 * 24 * 3_600_000;

/** One finished episode of a journal, in the first form (see the module documentation). */
export interface JournalEntry {
  /** The episode's position in its schedule. */
  index: number;
  trajectory: Trajectory;
}

/** The journal file of `key` under the store at `root`. */
export function journalPath(root: string, key: string): string {
  return path.join(root, JOURNALS_DIR, `${createHash('sha256').update(key).digest('hex')}.jsonl`);
}

/**
 * An open journal: the entries earlier attempts left ({@link finished}) and an append handle for this one.
 *
 * @example
 * ```ts
 * const journal = await EpisodeJournal.open(store.root, `${workflowId}/${runId}/${activityId}`);
 * await collect({ …, resume: journal.finished, onEpisode: (i, t) => journal.append(i, t) });
 * await journal.remove();
 * ```
 */
export class EpisodeJournal {
  /** The pending `fdatasync`, when writes were made since the last one. */
  private syncTimer: NodeJS.Timeout | undefined;
  private closed = false;
  /** The lines appended since the last write, in call order, and the write that will take them. */
  private batch: string[] = [];
  private flush: Promise<void> | undefined;

  private constructor(
    /** The journal's file. */
    readonly file: string,
    /** Episodes earlier attempts finished, by schedule position (the last entry of a position wins). */
    readonly finished: ReadonlyMap<number, Trajectory>,
    private readonly handle: FileHandle,
    private readonly syncEveryMs: number,
  ) {}

  /**
   * Opens (creating if needed) the journal of `key` in the store at `root` and reads what it holds. `syncEveryMs`:
   * how long after a write the file is made durable (default {@link JOURNAL_SYNC_MS}; 0: before `append` returns).
   */
  static async open(root: string, key: string, options: { syncEveryMs?: number } = {}): Promise<EpisodeJournal> {
    const file = journalPath(root, key);
    await ensureDir(path.dirname(file));
    const { finished, complete } = await readJournal(file);
    const handle = await open(file, 'a');
    // A line cut short is dropped, so that the next append starts a line of its own.
    if ((await handle.stat()).size > complete) await handle.truncate(complete);
    return new EpisodeJournal(file, finished, handle, options.syncEveryMs ?? JOURNAL_SYNC_MS);
  }

  /**
   * Appends a finished episode — as its stored form when `stored` is given (`storedTrajectory` of this trajectory),
   * else as JSON — : when the promise resolves, the kernel has the line (it survives the process being
   * killed); the file is made durable within `syncEveryMs` (with 0, before the promise resolves). The episode is
   * serialised at once (what is written is the trajectory as it was given); the lines of every episode appended
   * in the same turn of the event loop go to the kernel together, in call order, in one synchronous write at the
   * end of that turn (`setImmediate`) — one system call for the episodes that finished together instead of one
   * each, and no round trip through libuv's thread pool, which would cost a fast episode a third of its rate
   * (bench/journal.ts).
   *
   * Why a killed process still loses no more than the episodes in flight: a caller (`collect`, `evaluate`) awaits
   * this promise before its worker takes another episode, so a worker whose line waits for the write runs nothing
   * meanwhile. Each worker therefore holds at most one episode the journal lacks — the one it runs, or the one
   * whose line is waiting — and a `kill -9` costs at most one episode per worker, the shard's concurrency, as when
   * every line had a write of its own (tests/pipeline-durability.test.ts counts the episodes run twice).
   */
  append(index: number, trajectory: Trajectory, stored?: StoredTrajectory): Promise<void> {
    if (this.closed) return Promise.reject(new StoreError(`journal ${this.file} is closed`));
    if (!Number.isSafeInteger(index)) return Promise.reject(new StoreError(`journal ${this.file}: index must be an integer, got ${String(index)}`));
    this.batch.push(
      stored === undefined
        ? `${JSON.stringify({ index, trajectory } satisfies JournalEntry)}\n`
        : `{"index":${index},"id":${JSON.stringify(trajectory.id)},"behaviour":${stored.behaviour},"extra":${stored.extra}}\n`,
    );
    this.flush ??= new Promise<void>((resolve, reject) => {
      setImmediate(() => {
        this.flush = undefined;
        this.writeBatch().then(resolve, reject);
      });
    });
    return this.flush;
  }

  /** Writes the lines appended so far in one synchronous write (whole lines, in call order), then syncs or schedules a sync. */
  private async writeBatch(): Promise<void> {
    const lines = this.batch;
    if (lines.length === 0) return;
    this.batch = [];
    const bytes = Buffer.from(lines.length === 1 ? (lines[0] as string) : lines.join(''));
    // A regular file takes the whole write at once; the loop only guards against a short one.
    for (let at = 0; at < bytes.length; ) at += writeSync(this.handle.fd, bytes, at);
    if (this.syncEveryMs <= 0) await this.handle.datasync();
    else this.syncTimer ??= setTimeout(() => void this.sync(), this.syncEveryMs).unref();
  }

  /** Makes what was written durable (best-effort: a failed sync only risks work a retry redoes). */
  private async sync(): Promise<void> {
    this.syncTimer = undefined;
    await this.handle.datasync().catch(() => undefined);
  }

  /** Closes the file, synced, keeping it (the unit of work did not finish: a retry reads it). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // Lines appended before the close are written: their appends resolve as promised.
    await this.flush?.catch(() => undefined);
    if (this.syncTimer !== undefined) {
      clearTimeout(this.syncTimer);
      await this.sync();
    }
    await this.handle.close();
  }

  /** Closes and deletes the journal (the unit's result is stored). */
  async remove(): Promise<void> {
    await this.close();
    await rm(this.file, { force: true });
  }
}

/**
 * The entries of a journal file (none when it does not exist). A last line cut short by a crash is ignored, and
 * so is a line that is not an entry (the file was damaged): the journal only saves work, so the episodes of such
 * lines simply run again.
 */
async function readJournal(file: string): Promise<{ finished: Map<number, Trajectory>; complete: number }> {
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return { finished: new Map(), complete: 0 };
    throw err;
  }
  // The bytes up to and with the last newline: the lines whose append completed.
  const complete = bytes.lastIndexOf(0x0a) + 1;
  const text = bytes.subarray(0, complete).toString('utf8');
  const finished = new Map<number, Trajectory>();
  const lines = text.split('\n');
  lines.pop(); // after the last newline
  for (const line of lines) {
    let entry: Record<string, unknown> | null;
    try {
      entry = JSON.parse(line) as Record<string, unknown> | null;
    } catch {
      continue;
    }
    if (typeof entry !== 'object' || entry === null || !Number.isInteger(entry.index)) continue;
    const trajectory = entryTrajectory(entry);
    if (trajectory !== undefined) finished.set(entry.index as number, trajectory);
  }
  return { finished, complete };
}

/** The trajectory of a journal line of either form, or `undefined` when the line holds none. */
function entryTrajectory(entry: Record<string, unknown>): Trajectory | undefined {
  const object = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  if (object(entry.trajectory)) return entry.trajectory as Trajectory;
  if (typeof entry.id !== 'string' || !object(entry.behaviour) || !object(entry.extra)) return undefined;
  const joined = joinTrajectory(entry.id, entry.behaviour, entry.extra);
  // In the schema's key order, as the episode had it, when it is a valid trajectory (it is, unless damaged).
  return fastParseTrajectory(joined) ?? (joined as Trajectory);
}

/** Removes the journals under the store at `root` not modified for `olderThanMs`; returns how many. */
export async function removeAbandonedJournals(root: string, olderThanMs = ABANDONED_JOURNAL_MS, now = Date.now()): Promise<number> {
  const dir = path.join(root, JOURNALS_DIR);
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return 0;
    throw err;
  }
  let removed = 0;
  for (const name of names) {
    const file = path.join(dir, name);
    const info = await stat(file).catch(() => undefined);
    if (info === undefined || !info.isFile() || now - info.mtimeMs < olderThanMs) continue;
    await rm(file, { force: true });
    removed++;
  }
  return removed;
}
