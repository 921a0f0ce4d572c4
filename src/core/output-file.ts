import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { link, mkdir, open, realpath, rename, rm, stat, unlink, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import type { Writable } from 'node:stream';
import { ConfigError, OutputExistsError } from './errors.js';
import { isErrno, siblingTempPath } from './fs.js';

/**
 * Output files that appear complete or not at all, for every command that writes one (`record convert`,
 * `reward score|calibrate|preferences`, the exporters). Text goes to a hidden temporary file beside the
 * target (a dotfile, so a directory walk skips it); `commit` flushes it, syncs it to disk and renames it
 * over the target; `abort`, or any failure, removes it and leaves an existing target as it was. The target's
 * directory is created. Errors name the target, never the temporary file. Whether a command may replace an
 * existing output at all is decided before its work starts, in one place: {@link checkNewOutput} (`--force`).
 */

/** Text is handed to the file in chunks of up to this many bytes. */
const CHUNK_BYTES = 1 << 21;

const EMPTY = Buffer.alloc(0);

/** Where {@link openOutput} writes: a file written atomically, or a stream (`-`: stdout). */
export interface OutputSink {
  /** The target as the user gave it (`-` for stdout), for messages. */
  readonly name: string;
  /** Appends text (buffered; respects the stream's back-pressure). */
  write(text: string): Promise<void>;
  /** Makes the output final: a file is renamed into place; a stream is left open. */
  commit(): Promise<void>;
  /** Drops what was written: a file's temporary copy is removed and an existing target kept. */
  abort(): Promise<void>;
}

/** An error about writing `name`, naming it (and not a temporary file) with the system's reason. */
function writeError(name: string, err: unknown): ConfigError {
  const e = err as NodeJS.ErrnoException;
  const reason = e.code === 'EISDIR' ? 'is a directory' : e.code === 'ENOTDIR' ? 'a parent of it is not a directory' : e.code === 'EACCES' ? 'permission denied' : e.message;
  return new ConfigError(`cannot write ${name}: ${reason}`);
}

/** How an output file is committed ({@link AtomicFile.open}). */
export interface WriteOptions {
  /**
   * Replace a file that holds something when the output is committed (the default). `false` for a command's
   * output that {@link checkNewOutput} found new: should another process have written it meanwhile (two runs
   * given the same `-o`), the commit keeps both, this one's beside it, and fails saying where.
   */
  replace?: boolean;
}

/** A file written atomically (see the module documentation). */
export class AtomicFile implements OutputSink {
  /**
   * Text is encoded (UTF-8) straight into `chunk`, `used` bytes of it so far; `spare` is the other chunk, which the
   * write in flight may still be reading. Encoding each piece of text into place costs about half of what joining
   * the text into one string and having the file write encode that did (bench/reward-file.ts writes 1.8 bytes for
   * every byte it reads). Both are allocated when first needed: a small output costs no more than it writes.
   */
  private chunk: Buffer = EMPTY;
  private spare: Buffer = EMPTY;
  private used = 0;
  private done = false;
  /** The write of the last chunk handed to the file (it never rejects: a failure is kept in {@link failure}). */
  private writing: Promise<void> = Promise.resolve();
  /** The first write error, thrown by the next write or by commit. */
  private failure: unknown;

  private constructor(
    readonly name: string,
    private readonly target: string,
    private readonly tmp: string,
    private readonly handle: FileHandle,
    private readonly replace: boolean,
  ) {}

  /**
   * Opens the temporary file of `target`, creating the target's directory.
   *
   * @throws ConfigError naming `target` when it cannot be written (a directory, no permission, …).
   */
  static async open(target: string, options: WriteOptions = {}): Promise<AtomicFile> {
    // `-` means stdout wherever an output can go there ({@link openOutput}); as a file name it is a mistake.
    if (target === '-') throw new ConfigError("cannot write '-' as a file: this output does not go to stdout; give a file path");
    await checkOutputPath(target);
    const abs = path.resolve(target);
    const tmp = siblingTempPath(abs);
    try {
      await mkdir(path.dirname(abs), { recursive: true });
      return new AtomicFile(target, abs, tmp, await open(tmp, 'w'), options.replace ?? true);
    } catch (err) {
      throw writeError(target, err);
    }
  }

  /** Appends text (buffered) or bytes (written after the buffered text). */
  async write(chunk: string | Uint8Array): Promise<void> {
    if (typeof chunk !== 'string') {
      await this.flush();
      await this.settle();
      try {
        await this.handle.write(chunk);
      } catch (err) {
        throw writeError(this.name, err);
      }
      return;
    }
    // A UTF-16 code unit takes at most 3 bytes in UTF-8 (a surrogate pair, two units, takes 4).
    if (this.used + 3 * chunk.length > this.chunk.length) {
      await this.flush();
      if (3 * chunk.length > CHUNK_BYTES) {
        // Larger than a chunk: handed to the file as it is, after what is buffered (flush waits for nothing else).
        await this.settle();
        this.writing = this.handle.write(chunk).then(
          () => undefined,
          (err: unknown) => {
            this.failure ??= err;
          },
        );
        return;
      }
      if (this.chunk.length === 0) this.chunk = Buffer.allocUnsafe(CHUNK_BYTES);
    }
    this.used += this.chunk.write(chunk, this.used);
  }

  /**
   * Hands the buffered bytes to the file. The write goes on while the caller fills the other chunk (it returns
   * once the write before it is done, so one chunk at most is in flight): the text is produced while the last
   * chunk is being written, not after.
   */
  private async flush(): Promise<void> {
    if (this.used === 0) return;
    await this.settle();
    const full = this.chunk.subarray(0, this.used);
    [this.chunk, this.spare] = [this.spare.length > 0 ? this.spare : Buffer.allocUnsafe(CHUNK_BYTES), this.chunk];
    this.used = 0;
    this.writing = writeAll(this.handle, full).then(
      () => undefined,
      (err: unknown) => {
        this.failure ??= err;
      },
    );
  }

  /** Waits for the write in flight; throws the first write error, naming the output. */
  private async settle(): Promise<void> {
    await this.writing;
    if (this.failure !== undefined) throw writeError(this.name, this.failure);
  }

  async commit(): Promise<void> {
    if (this.done) return;
    try {
      await this.flush();
      await this.settle();
      try {
        await this.handle.sync();
        await this.handle.close();
        this.done = true;
        if (!this.replace && !(await this.linkNew())) return;
        await rename(this.tmp, this.target);
      } catch (err) {
        throw err instanceof OutputExistsError ? err : writeError(this.name, err);
      }
    } catch (err) {
      await this.abort();
      throw err;
    }
  }

  /**
   * Commits without replacing what another process wrote since the check: a hard link, which fails when the
   * target exists. Returns whether the rename is still to do (the target is an empty file, which the check let
   * through; or the file system has no hard links).
   *
   * @throws OutputExistsError naming the target and where this output was kept instead.
   */
  private async linkNew(): Promise<boolean> {
    try {
      await link(this.tmp, this.target);
    } catch (err) {
      if (!isErrno(err, 'EEXIST')) return true;
      const info = await stat(this.target).catch(() => undefined);
      if (info?.isFile() && info.size === 0) return true;
      const kept = `${this.target}.${process.pid}.${randomBytes(3).toString('hex')}`;
      await rename(this.tmp, kept);
      throw new OutputExistsError(`output ${this.name} was written by another process while this command ran; it is left as it is, and this output is in ${kept}`);
    }
    await unlink(this.tmp);
    return false;
  }

  async abort(): Promise<void> {
    if (!this.done) {
      this.done = true;
      await this.writing;
      await this.handle.close().catch(() => undefined);
    }
    this.used = 0;
    await rm(this.tmp, { force: true });
  }
}

/** Writes all of `bytes` (a file handle's write may take fewer than it was given). */
async function writeAll(handle: FileHandle, bytes: Uint8Array): Promise<void> {
  for (let at = 0; at < bytes.length; ) at += (await handle.write(bytes, at)).bytesWritten;
}

/** Writes to a stream that stays open (stdout for `-o -`). */
class StreamSink implements OutputSink {
  constructor(
    readonly name: string,
    private readonly stream: Writable,
  ) {}

  async write(text: string): Promise<void> {
    if (!this.stream.write(text)) await once(this.stream, 'drain');
  }

  async commit(): Promise<void> {}

  async abort(): Promise<void> {}
}

/** An output for `target`: stdout for `-`, a given stream, or an {@link AtomicFile} (with `options`). */
export async function openOutput(target: string | Writable, options: WriteOptions = {}): Promise<OutputSink> {
  if (typeof target !== 'string') return new StreamSink('<stream>', target);
  if (target === '-') return new StreamSink('stdout', process.stdout);
  return AtomicFile.open(target, options);
}

/**
 * Checks, before any work, that `target` could be written as a file: not a directory, and no parent of it a
 * file. (`-`, stdout, always can.) Commands that run for minutes, or spend money, check this first, with
 * {@link checkNewOutput}, which also refuses to replace what is there.
 *
 * @throws ConfigError naming `target`.
 */
export async function checkOutputPath(target: string): Promise<void> {
  if (target === '-') return;
  const info = await stat(path.resolve(target)).catch(() => undefined);
  if (info?.isDirectory()) throw new ConfigError(`cannot write ${target}: is a directory`);
  if (info === undefined) await checkParents(target);
}

/** Throws unless every existing ancestor of `target` up to the first one that exists is a directory. */
async function checkParents(target: string): Promise<void> {
  const abs = path.resolve(target);
  for (let dir = path.dirname(abs); ; dir = path.dirname(dir)) {
    const parent = await stat(dir).catch(() => undefined);
    if (parent !== undefined) {
      if (!parent.isDirectory()) throw new ConfigError(`cannot write ${target}: ${dir} is a file, not a directory`);
      return;
    }
    if (path.dirname(dir) === dir) return;
  }
}

/** Options of {@link checkNewOutput}. */
export interface NewOutputOptions {
  /** Replace an existing output (the command's `--force`). */
  force?: boolean;
  /** The output is a directory (an export split by task, an hf dataset) rather than a file. */
  directory?: boolean;
  /** `-` means stdout for this output ({@link openOutput}); otherwise `-` is refused. */
  stdout?: boolean;
}

/**
 * The one check of every command that writes an output a user may have paid for (collected trajectories,
 * an eval result, scored or converted trajectories, a calibration, an export): made before any work, it
 * refuses to replace anything unless `force`. An output that does not exist, or is an empty file, holds
 * nothing to lose; anything else (a file with content; for a `directory` output any directory, even an empty
 * one) is an {@link OutputExistsError} naming `target` and `--force`. Whatever `force`, a file output may
 * not be a directory nor lie under a file ({@link checkOutputPath}), and nothing that is neither a regular
 * file nor a directory (`/dev/stdout`, a fifo) is ever replaced by a regular file. `-` passes when the output
 * may go to stdout (`stdout`), and is refused otherwise (it would be written as a file named `-`).
 *
 * @example
 * ```ts
 * await checkNewOutput(opts.out, { force: opts.force }); // before the first episode
 * // … hours of episodes …
 * await writeFileAtomically(opts.out, text);
 * ```
 * @throws OutputExistsError, or ConfigError, naming `target`.
 */
export async function checkNewOutput(target: string, options: NewOutputOptions = {}): Promise<void> {
  if (target === '-') {
    if (options.stdout) return;
    throw new ConfigError("output '-': this output cannot go to stdout; give a file path");
  }
  if (!options.directory) await checkOutputPath(target);
  const info = await stat(path.resolve(target)).catch(() => undefined);
  if (info === undefined) {
    await checkParents(target);
    return;
  }
  if (!info.isFile() && !info.isDirectory()) {
    throw new ConfigError(`output ${target} is not a regular file or a directory; it is never replaced${options.stdout ? ' (use - for stdout)' : ''}`);
  }
  if (options.force || (info.isFile() && info.size === 0)) return;
  throw new OutputExistsError(`output ${target} already exists (pass --force to replace it, or choose another path)`);
}

/** Writes `content` (text or bytes) to `target` atomically ({@link AtomicFile}, with `options`). */
export async function writeFileAtomically(target: string, content: string | Uint8Array, options: WriteOptions = {}): Promise<void> {
  const file = await AtomicFile.open(target, options);
  try {
    await file.write(content);
  } catch (err) {
    await file.abort();
    throw err;
  }
  await file.commit();
}

/** The real path of `p`; for a path that does not exist yet, its directory's real path and its name. */
export async function realPathOf(p: string): Promise<string> {
  const abs = path.resolve(p);
  try {
    return await realpath(abs);
  } catch {
    return path.join(await realpath(path.dirname(abs)).catch(() => path.dirname(abs)), path.basename(abs));
  }
}

/**
 * Refuses an output that would overwrite one of the command's inputs (`record convert log.jsonl -o
 * log.jsonl` would replace the log it reads). Links are resolved; `-` (stdout) is always allowed.
 *
 * @param flag The option that named the output, for the message (`-o`).
 * @throws ConfigError naming both paths.
 */
export async function assertNotAnInput(out: string, inputs: readonly string[], flag = '-o'): Promise<void> {
  if (out === '-') return;
  const target = await realPathOf(out);
  for (const input of inputs) {
    if ((await realPathOf(input)) === target) throw new ConfigError(`${flag} ${out}: is the input ${input}; writing it would replace what is being read (choose another output file)`);
  }
}
