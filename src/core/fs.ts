import { randomBytes } from 'node:crypto';
import { accessSync, constants } from 'node:fs';
import { lstat, mkdir, open, rename, unlink, utimes } from 'node:fs/promises';
import path from 'node:path';

/**
 * File-system primitives every part shares: the artifact store (`src/hub/store`), output files
 * (`output-file.ts`), run directories and workspaces (`src/runtime`), the sandbox's leftover cleanup.
 *
 * A file published with {@link atomicWrite} is written as: a temp file → `fsync` it → `rename` it onto its
 * final name → `fsync` the destination directory. `rename(2)` within one filesystem is atomic, so a reader
 * sees either no file or the whole file, never a prefix; the two fsyncs make the content durable before the
 * name is, and the name durable before the caller goes on to publish anything that refers to it. The temp
 * file must be on the destination's filesystem (beside it by default; the store keeps its temp files in one
 * `tmp/` directory of its root, `src/hub/store/atomic.ts`).
 */

/** True when `err` is a Node system error with the given `code`. */
export function isErrno(err: unknown, code: string): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === code;
}

/** Whether `path` is a file this process may execute. */
export function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Whether process `pid` exists on this host (signal 0 checks without sending anything). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to someone else.
    return isErrno(err, 'EPERM');
  }
}

/** Whether anything (a file, a directory, a symlink, even a dangling one) is at `p`. */
export async function pathExists(p: string): Promise<boolean> {
  try {
    await lstat(p);
    return true;
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return false;
    throw err;
  }
}

/**
 * Sets the access and modification times of what is at `p` to now; returns whether it exists. Something the
 * process may not touch (a read-only object of another user) still counts as existing.
 */
export async function touch(p: string): Promise<boolean> {
  const now = new Date();
  try {
    await utimes(p, now, now);
    return true;
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return false;
    if (isErrno(err, 'EPERM') || isErrno(err, 'EACCES')) return pathExists(p);
    throw err;
  }
}

/** `fsync` on a directory, so a rename or unlink inside it is durable. */
export async function fsyncDir(dir: string): Promise<void> {
  let fh;
  try {
    fh = await open(dir, constants.O_RDONLY);
  } catch (err) {
    // Some platforms cannot open directories; durability of the rename is then best effort.
    if (isErrno(err, 'EISDIR') || isErrno(err, 'EPERM') || isErrno(err, 'EACCES')) return;
    throw err;
  }
  try {
    await fh.sync();
  } catch (err) {
    if (!(isErrno(err, 'EINVAL') || isErrno(err, 'EBADF'))) throw err;
  } finally {
    await fh.close();
  }
}

/**
 * `mkdir -p dir`, fsyncing the parent of every directory it created so the new entries survive a
 * crash (a file renamed into a directory that vanishes on reboot would be lost).
 */
export async function ensureDir(dir: string): Promise<void> {
  const first = await mkdir(dir, { recursive: true });
  if (first === undefined) return;
  // `first` is the top-most directory created; fsync every parent from dir's parent up to first's.
  let cur = dir;
  for (;;) {
    await fsyncDir(path.dirname(cur));
    if (path.resolve(cur) === path.resolve(first)) break;
    cur = path.dirname(cur);
  }
}

/**
 * Creates `file` (which must not exist), writes `data` and fsyncs it; on failure the file is removed. The
 * first half of {@link atomicWrite}, for callers that publish a batch of files and fsync each directory once.
 */
export async function writeSynced(file: string, data: string | Uint8Array, mode = 0o666): Promise<void> {
  const fh = await open(file, 'wx', mode);
  try {
    await fh.writeFile(data);
    await fh.sync();
  } catch (err) {
    await fh.close().catch(() => undefined);
    await unlink(file).catch(() => undefined);
    throw err;
  }
  await fh.close();
}

/**
 * Moves a synced temp file onto `dest` (creating its directory) without fsyncing the directory; the
 * caller fsyncs the directories of a batch once (see {@link atomicWrite} for the single-file form).
 */
export async function moveInto(tmp: string, dest: string): Promise<void> {
  try {
    await rename(tmp, dest);
  } catch (err) {
    if (!isErrno(err, 'ENOENT')) {
      await unlink(tmp).catch(() => undefined);
      throw err;
    }
    await ensureDir(path.dirname(dest));
    await rename(tmp, dest);
  }
}

/**
 * A fresh temp path beside `file`: hidden (a dotfile, so a directory walk skips it), named after `file`, the
 * process and a random suffix, on `file`'s filesystem so that renaming it onto `file` is atomic.
 */
export function siblingTempPath(file: string): string {
  const abs = path.resolve(file);
  return path.join(path.dirname(abs), `.${path.basename(abs)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
}

/** Options of {@link atomicWrite}. */
export interface AtomicWriteOptions {
  /**
   * The temp file to write first; it must not exist and must be on `dest`'s filesystem. Default:
   * {@link siblingTempPath}.
   */
  tmp?: string;
  /** Permission bits of the new file (before the umask). Default `0o666`, as `fs.writeFile`. */
  mode?: number;
}

/**
 * Publishes `data` at `dest` atomically and durably: temp file, fsync, rename, fsync of the directory (see the
 * module comment). `dest`'s directory is created when missing.
 *
 * @example
 * ```ts
 * await atomicWrite(path.join(runDir, 'stored.json'), JSON.stringify(result));
 * ```
 */
export async function atomicWrite(dest: string, data: string | Uint8Array, options: AtomicWriteOptions = {}): Promise<void> {
  let tmp = options.tmp;
  if (tmp === undefined) {
    await ensureDir(path.dirname(dest));
    tmp = siblingTempPath(dest);
  }
  await writeSynced(tmp, data, options.mode);
  await moveInto(tmp, dest);
  await fsyncDir(path.dirname(dest));
}
