import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { lstat, mkdir, open, readdir, rename, stat, unlink, utimes } from 'node:fs/promises';
import { hostname } from 'node:os';
import path from 'node:path';

/**
 * Crash-safe file primitives of the artifact store.
 *
 * Every file the store publishes is written as: a temp file under `<root>/tmp/` → `fsync` it → `rename`
 * it onto its final name → `fsync` the destination directory. `rename(2)` within one filesystem is
 * atomic, so a reader sees either no file or the whole file, never a prefix; the two fsyncs make the
 * content durable before the name is, and the name durable before the caller goes on to publish
 * anything that refers to it.
 *
 * Temp files live in one `tmp/` directory at the store root rather than beside their destination:
 * it is on the same filesystem (the root is one directory tree), so the rename is just as atomic, and
 * cleaning up after a crashed writer is a scan of one small directory instead of every shard.
 */

/** Subdirectory of the store root that holds in-flight temp files. */
export const TMP_DIR = 'tmp';

const TMP_SUFFIX = '.tmp';
const HOST = hostname().replace(/[^A-Za-z0-9-]/g, '_').slice(0, 63) || 'host';

/**
 * A fresh temp path under `<root>/tmp/`, named `<host>.<pid>.<random>.tmp` so that a later cleanup can
 * tell whether its writer is still alive.
 */
export function tempPath(root: string): string {
  return path.join(root, TMP_DIR, `${HOST}.${process.pid}.${randomBytes(8).toString('hex')}${TMP_SUFFIX}`);
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
 * crash (an object renamed into a shard that vanishes on reboot would be lost).
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

/** Writes `data` to a fresh temp file and fsyncs it; returns the temp path. */
export async function writeTemp(root: string, data: string | Uint8Array, mode = 0o444): Promise<string> {
  const tmp = tempPath(root);
  const fh = await open(tmp, 'wx', mode);
  try {
    await fh.writeFile(data);
    await fh.sync();
  } catch (err) {
    await fh.close().catch(() => undefined);
    await unlink(tmp).catch(() => undefined);
    throw err;
  }
  await fh.close();
  return tmp;
}

/**
 * Moves a synced temp file onto `dest` (creating its directory) without fsyncing the directory; the
 * caller fsyncs the directories of a batch once (see {@link publishAtomic} for the single-file form).
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

/** Atomically publishes `data` at `dest`: temp file, fsync, rename, fsync of the directory. */
export async function writeFileAtomic(root: string, dest: string, data: string | Uint8Array, mode = 0o444): Promise<void> {
  const tmp = await writeTemp(root, data, mode);
  await moveInto(tmp, dest);
  await fsyncDir(path.dirname(dest));
}

/** What {@link cleanTempFiles} removed and kept. */
export interface TempCleanup {
  removed: string[];
  kept: number;
}

/**
 * Removes temp files left by writers that are gone: on this host, those whose process no longer
 * exists; from any host, those not modified for `staleMs` (default one hour), which covers writers on
 * other hosts of a shared store and pid reuse here.
 */
export async function cleanTempFiles(root: string, options: { staleMs?: number; now?: number } = {}): Promise<TempCleanup> {
  const dir = path.join(root, TMP_DIR);
  const staleMs = options.staleMs ?? 3_600_000;
  const now = options.now ?? Date.now();
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return { removed: [], kept: 0 };
    throw err;
  }
  const removed: string[] = [];
  let kept = 0;
  for (const name of names) {
    const file = path.join(dir, name);
    const owner = parseTempName(name);
    let dead = false;
    if (owner && owner.host === HOST) dead = owner.pid !== process.pid && !processAlive(owner.pid);
    if (!dead) {
      try {
        dead = now - (await stat(file)).mtimeMs >= staleMs;
      } catch (err) {
        if (isErrno(err, 'ENOENT')) continue;
        throw err;
      }
    }
    if (!dead) {
      kept++;
      continue;
    }
    try {
      await unlink(file);
      removed.push(file);
    } catch (err) {
      if (!isErrno(err, 'ENOENT')) throw err;
    }
  }
  if (removed.length > 0) await fsyncDir(dir);
  return { removed, kept };
}

function parseTempName(name: string): { host: string; pid: number } | undefined {
  const m = /^(.+)\.(\d+)\.[0-9a-f]+\.tmp$/.exec(name);
  if (!m) return undefined;
  return { host: m[1] as string, pid: Number(m[2]) };
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

/** True when `err` is a Node system error with the given `code`. */
export function isErrno(err: unknown, code: string): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === code;
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
